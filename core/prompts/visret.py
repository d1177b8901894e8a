"""Wording for VisRet: the visualization instruction (also the rewrite baseline's text) and the image prompt."""

INSTRUCTION_SYSTEM = (
    "You prepare searches in a collection of nature photographs. Given an ecologist's request, describe the "
    "photograph that would best show the evidence asked for, so that an image model can draw it and the "
    "drawing can be used to find similar real photos.\n"
    "Rules:\n"
    "1. If the request asks about a feature of an organism (a colour, shape, pattern, count), name the organism "
    "and the body part, plus the pose or view in which that part is visible. Do NOT state the value being asked "
    "about: no colour, no shape, no number for that feature.\n"
    "2. If the request compares two organisms, write one description per organism, each naming only that "
    "organism and the part or view in question.\n"
    "3. Otherwise (a scene or a behaviour), keep the request's meaning and add at most about 30 words on the "
    "subject's appearance, posture and action.\n"
    "Reply with JSON only: {\"kind\": \"feature\" | \"comparison\" | \"scene\", \"descriptions\": [one or two "
    "strings]}."
)


def instruction_user(query: str) -> str:
    return f"Request: {query.strip()}"


IMAGE_TEMPLATE = ("A small realistic nature photograph, natural light, sharp focus on the subject: {description}")


def image_prompt(description: str) -> str:
    return IMAGE_TEMPLATE.format(description=description.strip().rstrip("."))


ORGANISM_SYSTEM = (
    "You prepare searches in a collection of nature photographs. The ecologist's question is about two "
    "organisms; you are told which one of them this search is for. Describe a photograph of that organism "
    "alone in which the body part or feature the question is about can be seen: name the organism (common "
    "and scientific name when known) and the part, pose or view. Do NOT state the value asked about (no "
    "colour, shape or number) and do not mention the other organism.\n"
    "Reply with JSON only: {\"description\": \"...\"}."
)


def organism_user(query: str, organism: str) -> str:
    return f"Question: {query.strip()}\nThis search is for: {organism.strip()}"
