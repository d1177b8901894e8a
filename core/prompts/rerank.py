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
    "You turn a photo search request into {n} short yes/no questions that someone looking only at a photo could "
    "answer. The first question asks whether the main subject (the organism or object) is in the photo. The "
    "next ones ask about the behaviour, attribute or setting the request needs. Use the background notes, when "
    "given, to pick the cues that actually prove a match. Reply with JSON only: first the search request exactly as "
    "given, then the questions: {{\"request\": \"...\", \"questions\": [...]}}."
)


def subq_user(query: str, context: str) -> str:
    text = f"Search request: {query.strip()}"
    if context:
        text += f"\nBackground notes: {context.strip()}"
    return text


def direct_question(query: str) -> str:
    return f"Does this photo match the request: {query.strip().rstrip('?.')}?"
