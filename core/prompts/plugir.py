"""Wording for the PlugIR dialogue: reformulation, the questioner and the redundancy filter."""

REFORMULATE_SYSTEM = (
    "You maintain a search description for a photo collection. Merge the first description and the questions "
    "and answers that followed into one concise caption in the style of a photo caption, keeping every fact "
    "the user confirmed and dropping what they denied or were unsure about. Reply with the caption only."
)
PARAPHRASE_HINT = "Your last caption did not change although new answers arrived; reword it to include them."


def dialogue_text(description: str, turns) -> str:
    lines = [f"First description: {description.strip()}"]
    for q, a in turns:
        lines.append(f"Q: {q.strip()}\nA: {a.strip()}")
    return "\n".join(lines)


QUESTIONER_SYSTEM = (
    "You help someone find one photo in a large collection by asking clarifying questions. You see the current "
    "search caption, the dialogue so far and numbered captions of photos that the search currently retrieves. "
    "Propose {n} different short questions about visual attributes that these candidates share with the "
    "caption but that the caption and dialogue do not settle, so that the answer will separate the candidates. "
    "Reply with JSON only: {{\"questions\": [...]}}."
)


def questioner_user(caption: str, turns, candidates) -> str:
    lines = [f"Search caption: {caption.strip()}"]
    for q, a in turns:
        lines.append(f"Asked: {q.strip()} Answer: {a.strip()}")
    lines.append("Retrieval candidates:")
    lines += [f"{i}. {c.strip()}" for i, c in enumerate(candidates, start=1)]
    return "\n".join(lines)


FILTER_SYSTEM = (
    "Using only the search caption and the dialogue below (no guessing), try to answer each question. Reply "
    "with JSON only: {\"answers\": [one string per question, the answer or the word \"uncertain\"]}."
)


def filter_user(caption: str, turns, questions) -> str:
    lines = [f"Search caption: {caption.strip()}"]
    for q, a in turns:
        lines.append(f"Asked: {q.strip()} Answer: {a.strip()}")
    lines += [f"Question {i}: {q}" for i, q in enumerate(questions, start=1)]
    return "\n".join(lines)
