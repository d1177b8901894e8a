"""The web app's camera-trap words (shown only when the catalog has deployments): the filters, the captions,
the photo view's lines, the identify row, and a match through a detection's box. The rest of the page's strings
are in ui/strings.py."""
from __future__ import annotations

# a photo the search reached through a detection's box (camera traps): the box is drawn on the photo
IN_BOX_SHORT = "matched in the {category}'s box"
IN_BOX = ("Matched inside the box of {article} {category} ({conf}% detector confidence), drawn on the photo: "
          "the search looked inside the box, not only at the whole frame.")
# the Search view's camera-trap filters and the captions
CT_FILTERS = "Camera traps"
CT_DEPLOYMENTS = "Deployments (cameras at one place for one period; empty: all)"
CT_TIMES = "Time of day, from the sun at the camera's place (frames without place or time are left out)"
CT_TIME_NAMES = {"day": "day", "dawn": "dawn (civil twilight)", "dusk": "dusk (civil twilight)", "night": "night"}
CT_INCLUDE_EMPTY = "Show empty frames (a detector looked and found no animal, person or vehicle)"
CT_BY_EVENT = "One result per event (a burst of frames): its best frame"
CT_CATEGORIES = "The detector found"
CT_CATEGORY_NAMES = {"animal": "an animal", "person": "a person", "vehicle": "a vehicle"}
CT_SPECIES = "Species someone identified (scientific name)"
CT_CLASSIFIED = "Identified by"
CT_CLASSIFIED_NAMES = {"": "any (no filter)", "human": "a person", "machine": "a machine (classifier)",
                       "none": "not identified yet"}
CT_FRAMES = "{n} frames"
CT_ONE_FRAME = "1 frame"
CT_NO_TIME = "time unknown"
# the photo view's camera-trap lines
CT_HEAD = "Camera trap"
CT_DEPLOYMENT = "Deployment"
CT_PLACE = "Place"
CT_TAKEN = "Taken"
CT_TAKEN_LOCAL = "{time} (the camera's clock, offset from UTC not known)"
CT_TAKEN_OFFSET = "{time} (UTC{offset})"
CT_TIME_ISSUE = "kept out of the date and time-of-day filters: {why}"
CT_EVENT = "Event"
CT_EVENT_LINE = "{event}: {frames}, most animals in one frame: {max_n}"
CT_EVENT_LINE_PLAIN = "{event}: {frames}"
CT_DETECTIONS = "Detector"
CT_DETECTION = "{category} ({conf:.0%} sure{where}), by {model}"
CT_DETECTION_LABEL = ", classified as {label}"
CT_DETECTION_IMPORTED = "{model} (a box of the Camtrap DP package's observations)"
CT_NO_DETECTIONS = "looked at this frame and found nothing"
CT_NOT_LOOKED = "no detector has looked at this frame"
CT_OBSERVATIONS = "Identified"
CT_OBSERVATION = "{what}{count} · {level}, by {who}{when}"
CT_OBS_COUNT = ", {n} seen"
CT_OBS_LEVELS = {"media": "this frame", "event": "the whole event"}
CT_OBS_BY_HUMAN = "{name} (a person)"
CT_OBS_BY_MACHINE = "{name} (a machine, {p:.0%} sure)"
CT_OBS_BY_MACHINE_PLAIN = "{name} (a machine)"
CT_OBS_SOMEONE = "someone"
CT_OBS_TYPES = {"blank": "no animal", "human": "a person", "vehicle": "a vehicle", "unknown": "an animal not known",
                "unclassified": "not identified yet"}
CT_STRIP = "The event's frames, in time order: click one to see it"
CT_STRIP_CAPTION = "frame {n} of {total} · {time}"
CT_STRIP_FRAME = ("A frame of this result's event, picked in the strip below (not itself ranked); ◀ ▶ move "
                  "through the results.")
CT_PEOPLE_HIDDEN = ("A person was detected on this photo: the person is blurred (or the photo withheld) for "
                    "whoever is not logged in.")
# identifications
CT_IDENTIFY = "Identify"
CT_ID_SPECIES = "Species (scientific name; 'blank' for no animal)"
CT_ID_COUNT = "How many"
CT_ID_WHO = "Your name"
CT_ID_PHOTO = "This frame (i)"
CT_ID_EVENT = "The whole event (e)"
CT_ID_CONFIRM = "Confirm {name} (c)"
CT_ID_SAVED = "Saved: {target} is {what}{count}, identified by {who}."
CT_ID_TARGET_PHOTO = "photo {photo}"
CT_ID_TARGET_EVENT = "event {event} ({frames})"
CT_ID_KEYS = "Keys in the photo view: i this frame · e the whole event · c confirm the species shown"
CT_ID_NOTHING = "Open a camera-trap photo first."
CT_ID_NO_EVENT = "This photo belongs to no event; identify the frame instead."
CT_ID_NO_SPECIES = "Type a species first (or 'blank' for no animal)."
CT_ID_NONE_TO_CONFIRM = "No species has been identified on this photo yet, so there is nothing to confirm."
CT_EVENT_LABEL = "The label applies to all {n} frames of this event."
CT_BOX_LABEL = "{category} {conf:.0%}"
