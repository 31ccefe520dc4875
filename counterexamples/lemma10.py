"""Lemma 10 without general position: repeated key differences tie more than d rows at the
directional margin (e.g. d = 1 and two tokens with the same key)."""

from attnsvm.claims.registry import Search

SEARCHES = {"general_position": Search(note="integer keys with repeated differences: "
                                            "more than d rows tie at the margin")}
