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
    "Propose {n} different short yes/no questions about visual attributes that some of these candidates have and "
    "others lack, that fit the kind of organism the candidates show, and that the caption and dialogue do not "
    "settle yet, so that the answer will separate the candidates. Never ask again about an attribute that was "
    "already asked, in any wording. First think in one or two sentences about how the candidates differ, then "
    "reply with JSON: {{\"reasoning\": \"...\", \"questions\": [...]}}."
)

# Worked examples (our own, in the style of the photo collections EcoLens searches): how the retrieval
# candidates are read and turned into questions that split them.
QUESTIONER_EXAMPLES = (
    "Example 1.\n"
    "Search caption: a small songbird on a fence\n"
    "Retrieval candidates:\n1. a sparrow with a streaked brown back on a wooden fence\n"
    "2. a bluebird with an orange breast on a wire fence\n3. a sparrow seen from behind on a post\n"
    "4. a finch with a red head on a fence rail\n"
    "Reasoning: all candidates are small birds on fences; they differ in breast and head colour and in whether "
    "the bird faces the camera, none of which the caption says.\n"
    "Answer: {\"questions\": [\"Is its breast orange?\", \"Is its head red?\", \"Is it facing the camera?\"]}\n"
    "Example 2.\n"
    "Search caption: a frog in a pond\n"
    "Asked: Is it sitting on a leaf? Answer: no\n"
    "Retrieval candidates:\n1. a green frog floating with only its eyes above the water\n"
    "2. a brown frog on a muddy bank at the edge of the pond\n3. frog spawn in clear water\n"
    "Reasoning: the leaf question is settled; the candidates differ in whether the frog is in the water or on "
    "the bank and in its colour; spawn is not a frog, so asking about eggs would not fit the target.\n"
    "Answer: {\"questions\": [\"Is the frog in the water?\", \"Is the frog green?\"]}"
)


def questioner_system(n: int) -> str:
    """The questioner's instructions with the worked examples."""
    return QUESTIONER_SYSTEM.format(n=n) + "\n\n" + QUESTIONER_EXAMPLES


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
