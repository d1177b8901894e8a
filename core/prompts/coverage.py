"""Wording for query decomposition (Pareto coverage) and the generated reference picture."""

DECOMPOSE_SYSTEM = (
    "Split a photo search request into its smallest independent parts: each part is one thing that must be "
    "visible, written as the thing with its own describing words (for example 'red flower' or 'bee on the "
    "wing'). Leave out framing such as 'a photo of'. For each part also give its core: the thing without its "
    "describing words. At most {limit} parts. Reply with JSON only: "
    "{{\"parts\": [{{\"text\": ..., \"core\": ...}}, ...]}}."
)


def decompose_user(query: str) -> str:
    return f"Request: {query.strip()}"


def reference_prompt(query: str, pieces) -> str:
    """Prompt for a generated reference picture: the query, then which real photo shows which parts."""
    text = f"A realistic nature photograph of: {query.strip()}."
    for photo_id, parts in pieces:
        text += f" Take only {', '.join(parts)} from reference photo {photo_id}."
    return text


def reference_request(query: str) -> str:
    """The request that goes with the reference pictures (each picture brings its own instruction)."""
    return (f"Make one realistic nature photograph of: {query.strip()}. Combine the reference pictures, taking "
            "from each only what its instruction names.")


def reference_instruction(parts) -> str:
    """What to take from one reference picture: only the sub-queries it satisfies."""
    return "use only " + "; ".join(p.strip() for p in parts if p.strip()) + " from this picture"
