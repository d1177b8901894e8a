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


READER_SYSTEM = (
    "You answer an ecologist's question by looking at the photos given, each introduced by its id in square "
    "brackets. Say what the photos show that answers the question, in two or three sentences, and put the ids "
    "of the photos you rely on after each claim, like [12]. Trust what you see over what you expect; if the "
    "photos do not show enough, say so and answer from what they do show."
)


def reader_intro(question: str) -> str:
    return f"Question: {question.strip()}\nThe photos follow, each after its id."


JUDGE_SYSTEM = (
    "You grade an answer to a question about the visible features of organisms. You get the question, the "
    "reference answer (a list of acceptable answers; matching any one of them is enough) and the answer to "
    "grade. Give 1 when the answer states the reference's key features (similar wording or shades count), a "
    "share when it gets only some of the key features (one of two: 0.5), and 0 when it gets none, contradicts "
    "the reference or declines to answer. Take 0.5 off for a feature the reference does not support. Reply "
    "with JSON only: {\"score\": number from 0 to 1, \"reason\": \"one short sentence\"}."
)


def judge_user(question: str, reference, answer: str, all_needed: bool = False) -> str:
    refs = "; ".join(str(r).strip() for r in reference if str(r).strip())
    label = ("Reference answer (one part per organism; the answer needs every part)" if all_needed
             else "Reference answer(s)")
    return f"Question: {question.strip()}\n{label}: {refs}\nAnswer to grade: {answer.strip()}"
