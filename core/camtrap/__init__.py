"""Camera traps (issue 34): Camtrap DP packages, deployments, events, detections."""
