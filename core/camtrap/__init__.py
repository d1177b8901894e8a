"""Camera-trap code (issue 34): deployments, captures, events, detections, observations and their formats."""
