"""The OpenAPI 3.1 description of the JSON API, served at /api/openapi.json."""

_CELL = {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
         "description": "axial [q, r]"}
_COLOUR = {"type": "string", "enum": ["white", "black"]}

SCHEMAS = {
    "Error": {
        "type": "object", "required": ["error", "code"],
        "properties": {"error": {"type": "string", "description": "one line for the user"},
                       "code": {"type": "string", "description": "stable machine-readable code"},
                       "id": {"type": "string"}, "link": {"type": "string", "format": "uri"}},
    },
    "Position": {
        "type": "object", "description": "exxit-position/1 (FORMATS.md)", "required": ["tiles"],
        "properties": {
            "format": {"const": "exxit-position/1"},
            "tiles": {"type": "array", "items": {
                "type": "object", "required": ["q", "r", "colour"],
                "properties": {"q": {"type": "integer"}, "r": {"type": "integer"}, "colour": _COLOUR,
                               "confidence": {"type": "number"}}}},
            "stacks": {"type": "array", "items": {
                "type": "object", "required": ["q", "r"],
                "properties": {"q": {"type": "integer"}, "r": {"type": "integer"},
                               "discs": {"type": "array", "description": "bottom to top; null = unread",
                                         "items": {"anyOf": [_COLOUR, {"type": "null"}]}},
                               "height": {"type": "integer"}, "top": _COLOUR,
                               "confidence": {"type": "number"},
                               "height_chances": {"type": "array", "items": {"type": "number"},
                                                  "description": "vision's chances of heights 1, 2, ..."}}}},
            "to_move": {"anyOf": [_COLOUR, {"type": "null"}]},
            "reserves": {"type": "object", "properties": {"white": {"type": "integer"},
                                                          "black": {"type": "integer"}}},
            "tiles_left": {"type": "integer"}, "total_tiles": {"type": "integer"},
            "passes": {"type": "integer"},
            "reserves_counted": {"type": "boolean", "description":
                                 "the reserves were counted at the table (the heights keep their sum)"},
        },
    },
    "Dance": {
        "type": "object", "required": ["from", "direction", "target", "drops", "perimeter"],
        "properties": {"from": _CELL, "direction": {"enum": ["E", "SE", "SW", "W", "NW", "NE"]},
                       "target": _CELL, "drops": {"type": "array", "items": _CELL},
                       "perimeter": {"type": "boolean"},
                       "text": {"type": "string", "description": "move notation"},
                       "after": {"type": "object", "description":
                                 "position, score and game_over after the dance, next_side and "
                                 "next_dances (its forced replies); or unknown"}},
    },
    "Analysis": {
        "type": "object", "description": "the `rules analyze` JSON of FORMATS.md, plus page extras",
        "required": ["forced_dances", "score", "islands", "game_over"],
        "properties": {
            "forced_dances": {"type": "object", "properties": {
                c: {"type": "array", "items": {"$ref": "#/components/schemas/Dance"}}
                for c in ("white", "black")}},
            "score": {"type": "object", "properties": {"white": {"type": "integer"},
                                                       "black": {"type": "integer"}}},
            "islands": {"type": "object", "description": "per colour, islands largest first"},
            "legal_moves": {"type": "array", "items": {"type": "object"}},
            "game_over": {"type": "boolean"},
            "priority": {"type": "object", "description":
                         "per colour, one line when the perimeter priority decided, else null"},
            "build_moves": {"type": "object", "description":
                            "per colour without a forced dance, its legal moves"},
            "winner": {"enum": ["white", "black", "draw"]},
            "unsure_heights": {"type": "array", "description":
                               "stacks read with low confidence whose height decides the forced dances",
                               "items": {"type": "object", "properties": {
                                   "at": _CELL, "read": {"type": "integer", "description": "height read"},
                                   "height": {"type": "integer", "description": "a disc more or less"},
                                   "to": {"type": "object", "description":
                                          "when reserves_counted: the stack the disc would be on "
                                          "instead (at, read, height)"},
                                   "forced_dances": {"type": "object", "description":
                                                     "per colour, the forced dances at that height",
                                                     "properties": {c: {"type": "array", "items": {
                                                         "$ref": "#/components/schemas/Dance"}}
                                                         for c in ("white", "black")}}}}},
        },
    },
    "PhotoAnalysis": {
        "type": "object", "required": ["id", "link", "position", "analysis"],
        "properties": {"id": {"type": "string"}, "link": {"type": "string", "format": "uri"},
                       "position": {"$ref": "#/components/schemas/Position"},
                       "analysis": {"$ref": "#/components/schemas/Analysis"}},
    },
}


def _error(description):
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def _json(ref, description):
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}}}


def document():
    return {
        "openapi": "3.1.0",
        "info": {"title": "Exxit Referee", "version": "1",
                 "description": "Photo of an EXXIT game in, forced dances and island score out."},
        "paths": {
            "/api/analyze": {"post": {
                "summary": "Read a photo and analyse the position",
                "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
                    "type": "object", "required": ["photo"],
                    "properties": {"photo": {"type": "string", "format": "binary",
                                             "description": "JPEG or PNG, at most 25 MB"},
                                   "to_move": {"enum": ["white", "black", "unknown"]}}}}}},
                "responses": {
                    "200": _json("PhotoAnalysis", "stored; `link` is its permanent page"),
                    "400": _error("no photo, not an image, corrupt or truncated image"),
                    "413": _error("upload over 25 MB or too many pixels"),
                    "422": _error("no EXXIT World found in the photo (code no_world), or the "
                                  "photo reads as an impossible position (code "
                                  "impossible_reading: the analysis is stored all the same and "
                                  "`id` and `link` name the page where it can be corrected)")}}},
            "/api/rules/analyze": {"post": {
                "summary": "Analyse a position (the page's corrections use this)",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Position"}}}},
                "responses": {"200": _json("Analysis", "the analysis"),
                              "400": _error("the body is not JSON"),
                              "422": _error("the JSON is not a valid position")}}},
            "/api/fit-heights": {"post": {
                "summary": "Fit the stacks' heights to the discs the players count in their reserves",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["position", "reserves"],
                    "properties": {"position": {"$ref": "#/components/schemas/Position"},
                                   "reserves": {"type": "object", "required": ["white", "black"],
                                                "properties": {c: {"type": "integer", "minimum": 0, "maximum": 8}
                                                               for c in ("white", "black")}}}}}}},
                "responses": {
                    "200": {"description": "`position`: the likeliest heights (by each stack's `height_chances`) "
                                           "that make the discs on the table and in the reserves a set; "
                                           "`changes`: [{at, read, height, unread?}] of the stacks changed"},
                    "400": _error("malformed body"),
                    "422": _error("an invalid position, or reserves the stacks cannot meet "
                                  "(code reserves_not_met)")}}},
            "/api/analyses/{id}": {"get": {
                "summary": "A stored analysis: reading, current position, corrections, analysis",
                "parameters": [{"name": "id", "in": "path", "required": True,
                                "schema": {"type": "string"}}],
                "responses": {"200": {"description": "the stored analysis"},
                              "404": _error("no such analysis")}}},
            "/api/analyses/{id}/second-photo": {"post": {
                "summary": "Read a stored analysis's photos together with one more photo of the same table",
                "description": "A new analysis (the stored one stays as it is): every stack the photos "
                               "show is read at the height they together make likeliest. Best taken from "
                               "another side of the table, 35-60 degrees from vertical. Posted to an "
                               "analysis already read from two photos, the new one reads all three; one "
                               "analysis reads at most ANALYSIS_MAX_PHOTOS (4) photos.",
                "parameters": [{"name": "id", "in": "path", "required": True,
                                "schema": {"type": "string"}}],
                "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
                    "type": "object", "required": ["photo"],
                    "properties": {"photo": {"type": "string", "format": "binary",
                                             "description": "JPEG or PNG, at most 25 MB"}}}}}},
                "responses": {
                    "200": _json("PhotoAnalysis", "the new analysis, stored; `link` is its permanent page"),
                    "400": _error("no photo, not an image, corrupt or truncated image"),
                    "404": _error("no such analysis"),
                    "413": _error("upload over 25 MB or too many pixels"),
                    "422": _error("no EXXIT World found in the new photo (code no_world), another "
                                  "World than the first photo's (code different_world), already the most "
                                  "photos an analysis reads (code too_many_photos), or an impossible "
                                  "reading (code impossible_reading, as for /api/analyze)")}}},
            "/api/analyses/{id}/position": {"put": {
                "summary": "Save a corrected position with the corrections that made it",
                "parameters": [{"name": "id", "in": "path", "required": True,
                                "schema": {"type": "string"}}],
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["position"],
                    "properties": {"position": {"$ref": "#/components/schemas/Position"},
                                   "corrections": {"type": "array", "items": {"type": "object"}}}}}}},
                "responses": {"200": {"description": "saved; the body holds the new analysis"},
                              "400": _error("malformed body"), "404": _error("no such analysis"),
                              "422": _error("invalid position")}}},
        },
        "components": {"schemas": SCHEMAS},
    }
