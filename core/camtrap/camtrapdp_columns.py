"""The Camtrap DP 1.0 columns and the fields of core.contracts.camtrap they fill, with the type each is read
as; shared by the reader (camtrapdp_read) and the writer. A column not named here is kept in the row's
`extra` under its own name, as text, so that it is written back as it came."""
from __future__ import annotations

# column -> (field of Deployment, type); 'text' is kept as given
DEPLOYMENT_COLUMNS: dict[str, tuple[str, str]] = {
    "deploymentID": ("key", "text"), "locationID": ("location_id", "text"), "locationName": ("location_name", "text"),
    "latitude": ("latitude", "float"), "longitude": ("longitude", "float"),
    "coordinateUncertainty": ("coordinate_uncertainty", "int"), "deploymentStart": ("start", "text"),
    "deploymentEnd": ("end", "text"), "setupBy": ("setup_by", "text"), "cameraID": ("camera_id", "text"),
    "cameraModel": ("camera_model", "text"), "cameraDelay": ("camera_delay", "int"),
    "cameraHeight": ("camera_height", "float"), "cameraDepth": ("camera_depth", "float"),
    "cameraTilt": ("camera_tilt", "int"), "cameraHeading": ("camera_heading", "int"),
    "detectionDistance": ("detection_distance", "float"), "timestampIssues": ("timestamp_issues", "bool"),
    "baitUse": ("bait_use", "bool"), "featureType": ("feature_type", "text"), "habitat": ("habitat", "text"),
    "deploymentGroups": ("deployment_group", "text"), "deploymentTags": ("tags", "text"),
    "deploymentComments": ("comments", "text"),
}

# column -> (field of Capture, type); filePath is the photo's path, timestamp is split by core.camtrap.times
MEDIA_COLUMNS: dict[str, tuple[str, str]] = {
    "mediaID": ("media_key", "text"), "deploymentID": ("deployment_key", "text"),
    "captureMethod": ("capture_method", "text"), "filePublic": ("file_public", "bool"),
    "fileName": ("file_name", "text"), "fileMediatype": ("media_type", "text"), "mediaComments": ("comments", "text"),
}
MEDIA_SPECIAL = ("timestamp", "filePath")  # read apart: the capture time, the file

# column -> (field of Observation, type)
OBSERVATION_COLUMNS: dict[str, tuple[str, str]] = {
    "observationID": ("key", "text"), "deploymentID": ("deployment_key", "text"), "mediaID": ("media_key", "text"),
    "eventID": ("event_key", "text"), "eventStart": ("event_start", "text"), "eventEnd": ("event_end", "text"),
    "observationLevel": ("level", "text"), "observationType": ("type", "text"),
    "scientificName": ("scientific_name", "text"), "count": ("count", "int"), "lifeStage": ("life_stage", "text"),
    "sex": ("sex", "text"), "behavior": ("behavior", "text"), "individualID": ("individual_id", "text"),
    "bboxX": ("bbox_x", "float"), "bboxY": ("bbox_y", "float"), "bboxWidth": ("bbox_w", "float"),
    "bboxHeight": ("bbox_h", "float"), "classificationMethod": ("method", "text"),
    "classifiedBy": ("classified_by", "text"), "classificationTimestamp": ("classified_at", "text"),
    "classificationProbability": ("probability", "float"), "observationComments": ("comments", "text"),
}
