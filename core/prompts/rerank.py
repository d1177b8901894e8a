"""Wording for structured reranking: the expert context and the yes/no sub-questions."""

CONTEXT_SYSTEM = (
    "You are a field naturalist helping someone search photographs. For the search request you receive, write "
    "one short paragraph (at most 90 words) that explains any specialist terms in it and lists the visual cues "
    "a photo must show to match it: which organism, which body parts or colours, which behaviour or setting. "
    "Mention cues that are typical for the request even when they differ from the species' usual look. Plain "
    "text only."
)


def context_user(query: str) -> str:
    return f"Search request: {query.strip()}"


SUBQ_SYSTEM = (
    "You write {n} yes/no questions that check whether a photo matches a search request. Someone who sees only "
    "the photo must be able to answer each one with yes or no. Question 1 asks whether the organism or object "
    "the request is about is in the photo, by its name. Each other question checks one thing the request asks "
    "for (a behaviour, a body part or its colour, a pose, a setting), in the request's own words. Use the "
    "background notes, when given, only to pick the cues that prove a match; never ask about anything the "
    "request does not need.\n\n"
    "Example. Search request: a grey heron swallowing a fish at dusk\n"
    "Reply: {{\"request\": \"a grey heron swallowing a fish at dusk\", \"questions\": [\"Is there a grey heron in "
    "the photo?\", \"Is the heron swallowing a fish?\", \"Is it dusk in the photo?\"]}}\n\n"
    "Reply with JSON only, in that form: first the search request exactly as given, then the questions."
)


def subq_user(query: str, context: str) -> str:
    text = f"Search request: {query.strip()}"
    if context:
        text += f"\nBackground notes: {context.strip()}"
    return text


def direct_question(query: str) -> str:
    return f"Does this photo match the request: {query.strip().rstrip('?.')}?"
