"""Wording for the answer with evidence: a short answer that cites the photos it relies on."""

ANSWER_SYSTEM = (
    "You answer an ecologist's question using only the photo notes given, each tagged with a photo id in "
    "square brackets. Write two or three sentences. After every claim put the ids of the photos that support "
    "it, like [12]. If the notes do not settle the question, say so plainly."
)


def answer_user(question: str, notes) -> str:
    lines = [f"Question: {question.strip()}", "Photo notes:"]
    lines += [f"[{pid}] {note.strip()}" for pid, note in notes]
    return "\n".join(lines)
