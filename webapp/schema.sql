-- One row per analysed photo; the id is the permanent link /a/<id>.
CREATE TABLE IF NOT EXISTS analysis (
    id          TEXT PRIMARY KEY,
    created     TEXT NOT NULL,
    updated     TEXT NOT NULL,
    source      TEXT NOT NULL,              -- "upload" or "sample:NAME"
    photo       BLOB NOT NULL,              -- the JPEG that vision read (orientation applied)
    reading     TEXT NOT NULL,              -- vision's JSON, as `python -m vision analyze` prints it
    overlay     TEXT NOT NULL,              -- pixel geometry of the cells for the page
    position    TEXT NOT NULL,              -- the current position: the reading plus corrections
    corrections TEXT NOT NULL DEFAULT '[]'  -- the user's corrections, oldest first
);

-- The photos an analysis read with its own, from other sides of the table: k = 2 for the second, 3 for the third.
CREATE TABLE IF NOT EXISTS other_photo (
    analysis_id TEXT NOT NULL REFERENCES analysis (id),
    k           INTEGER NOT NULL,
    photo       BLOB NOT NULL,              -- the JPEG that vision read (orientation applied)
    PRIMARY KEY (analysis_id, k)
);
