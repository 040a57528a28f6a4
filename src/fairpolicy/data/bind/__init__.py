"""Bind a control's roles to columns: label encodings and class sets (:mod:`.labels`),
score columns (:mod:`.scores`), group codes (:mod:`.groups`, :mod:`.codes`), the checks
on one column's values (:mod:`.rows`) and role resolution (:mod:`.roles`)."""
