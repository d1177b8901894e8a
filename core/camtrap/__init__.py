"""Camera traps (issue 34): Camtrap DP packages, camera cards (EXIF, deployments), events, detections and
their search filters."""
