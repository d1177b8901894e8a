"""The metadata of a Darwin Core Archive as GBIF publishes it: `eml.xml` (EML 2.1.1 under GBIF's metadata
profile: title, creator, pubDate, abstract, intellectualRights, contact, in the order the schema wants), and
the licences GBIF takes.

GBIF publishes a dataset only under one of three licences: CC0 1.0, CC BY 4.0 or CC BY-NC 4.0. The dataset's
licence goes into `intellectualRights` machine-readably, as a `ulink` whose `url` is the licence's address
(GBIF reads the licence from that URL). A dataset may not be published under a licence more open than any of
its records', so the archive takes the most restrictive of its records' licences among the three; records
whose licence is none of them are reported, one warning each (darwincore.write_archive)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from xml.etree import ElementTree as ET

from core.licences import licence_url, parse_licence

EML_NS = "eml://ecoinformatics.org/eml-2.1.1"
# the licences GBIF publishes, from the most open to the most restrictive: URL -> the name GBIF gives it
GBIF_LICENCES = {
    "https://creativecommons.org/publicdomain/zero/1.0/": "Public Domain (CC0 1.0)",
    "https://creativecommons.org/licenses/by/4.0/": "Creative Commons Attribution (CC-BY) 4.0",
    "https://creativecommons.org/licenses/by-nc/4.0/": "Creative Commons Attribution Non Commercial (CC-BY-NC) 4.0",
}
MOST_RESTRICTIVE = list(GBIF_LICENCES)[-1]


def gbif_licence(text: str | None) -> str:
    """The URL of the GBIF licence a record's licence (as its source wrote it) is, '' when it is none of the
    three (another version, a licence that is not Creative Commons, 'all rights reserved', nothing)."""
    url = licence_url(parse_licence(text))
    return url if url in GBIF_LICENCES else ""


def dataset_licence(record_licences: list[str]) -> str:
    """The dataset's licence URL: the most restrictive of the records' GBIF licences (URLs); CC BY-NC 4.0 when
    no record has one of them (the most restrictive GBIF takes: it claims no more than the records give)."""
    order = list(GBIF_LICENCES)
    taken = [order.index(u) for u in record_licences if u in GBIF_LICENCES]
    return order[max(taken)] if taken else MOST_RESTRICTIVE


@dataclass(frozen=True)
class Contact:
    """Who answers questions about the dataset (settings dwc_contact, dwc_contact_email); an empty name is
    written as the organisation 'EcoLens export' and the export says to set one before publishing."""

    name: str = ""
    email: str = ""


def _person(parent: ET.Element, tag: str, who: Contact) -> None:
    party = ET.SubElement(parent, tag)
    if who.name.strip():
        words = who.name.split()
        person = ET.SubElement(party, "individualName")
        if len(words) > 1:
            ET.SubElement(person, "givenName").text = " ".join(words[:-1])
        ET.SubElement(person, "surName").text = words[-1]
    else:
        ET.SubElement(party, "organizationName").text = "EcoLens export"
    if who.email.strip():
        ET.SubElement(party, "electronicMailAddress").text = who.email.strip()


def eml_xml(title: str, abstract: str, licence: str, contact: Contact, published: date) -> bytes:
    """eml.xml for a dataset under `licence` (a URL of GBIF_LICENCES), published on `published`."""
    eml = ET.Element("eml:eml", {"xmlns:eml": EML_NS, "packageId": "ecolens-export", "system": "EcoLens",
                                 "scope": "system", "xml:lang": "en"})
    dataset = ET.SubElement(eml, "dataset")
    ET.SubElement(dataset, "title", {"xml:lang": "en"}).text = title
    _person(dataset, "creator", contact)
    _person(dataset, "metadataProvider", contact)
    ET.SubElement(dataset, "pubDate").text = published.isoformat()
    ET.SubElement(dataset, "language").text = "en"
    ET.SubElement(ET.SubElement(dataset, "abstract"), "para").text = abstract
    para = ET.SubElement(ET.SubElement(dataset, "intellectualRights"), "para")
    para.text = "This work is licensed under a "
    link = ET.SubElement(para, "ulink", {"url": licence})
    ET.SubElement(link, "citetitle").text = GBIF_LICENCES.get(licence, licence) + " License"
    link.tail = (". Each record keeps its own licence and rights holder (dcterms:license and "
                 "dcterms:rightsHolder).")
    _person(dataset, "contact", contact)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(eml, encoding="utf-8")
