"""A shift at a table run from the dealer's screen alone (issue 22): the table as processes
(:mod:`.table`), the screen in Chromium (:mod:`.screen`), the rounds (:mod:`.play`) and the
check of the journal against the screen (:mod:`.audit`)."""
