"""The synthetic field-guide world: invented species, pictures, benchmark, and offline stand-in models
(encoder, painter, judge) that make every retrieval method checkable offline."""
