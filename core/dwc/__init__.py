"""Darwin Core helpers of core.darwincore: the dataset metadata GBIF wants (eml) and the values of terms that
need more than a copy of a catalog field (values)."""
