"""Camera traps (issue 34): Camtrap DP packages, deployments, captures, events, detections, observations
and their formats."""
