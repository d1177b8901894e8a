"""Camera traps: deployments, capture times, events, detections and their filters (issue 34)."""
