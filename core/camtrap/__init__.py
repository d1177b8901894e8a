"""Camera traps (issue 34): Camtrap DP packages, camera cards (EXIF, deployments), events, detections,
observations, their formats and their search filters."""
