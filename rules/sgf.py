"""Boardspace.net game records (SGF with ``GM[28]``), RULES.md section 13.

Cells are written ``col row``: with ``c = ord(col) - ord('M')``, ``q = 14 - row`` and
``r = row - 13 - c``; Boardspace's direction numbers equal ours.  Player 0 (``P0``, chips ``W``)
is white.  Only games from a Boardspace set-up can be written: ``exxit`` (39 tiles),
``exxit-blitz`` (29), ``exxit-beginner`` (19) and ``exxit-pro`` (the experienced set-up).

>>> from rules import Game, Place
>>> game = Game.standard()
>>> game.play(Place((0, 1)))
>>> text = game_to_sgf(game)
>>> text.splitlines()[1]
'; P0[0 Start P0]; P0[1 Dropb W M 14]; P0[2 Done]'
>>> game_from_sgf(text).moves
(Place((0, 1)),)
"""

import re

from .game import Game
from .geometry import DIRECTION_INDEX, DIRECTIONS, STEPS
from .moves import Dance, Enlarge, LayTile, MoveFormatError, Pass, Place
from .position import BLACK, WHITE, IllegalMoveError, Position

SGF_GAME = "28"
VARIANTS = {
    "exxit": lambda: Position.standard(39),
    "exxit-blitz": lambda: Position.standard(29),
    "exxit-beginner": lambda: Position.standard(19),
    "exxit-pro": lambda: Position.experienced(),
}
CHIP = {WHITE: "W", BLACK: "B"}
PLAYER = {WHITE: "P0", BLACK: "P1"}


class RecordError(MoveFormatError):
    """A game record that cannot be read (syntax, unknown game, unknown move string)."""


def cell_to_boardspace(cell):
    """``(q, r)`` as Boardspace's ``(column, row)``.

    >>> cell_to_boardspace((0, 0)), cell_to_boardspace((1, -1))
    (('N', 14), ('N', 13))
    """
    q, r = cell
    row = 14 - q
    code = ord("M") + row - 13 - r
    if not 32 < code < 127:
        raise RecordError(f"cell {cell} lies too far out for Boardspace's column letters")
    return chr(code), row


def cell_from_boardspace(column, row):
    """Boardspace's ``column`` letter and ``row`` number as ``(q, r)``.

    The column is taken as the raw character (beyond ``Z`` Boardspace writes the next
    characters), so it is case-sensitive.

    >>> cell_from_boardspace("M", 14), cell_from_boardspace("M", 13)
    ((0, 1), (1, 0))
    """
    if len(column) != 1:
        raise RecordError(f"bad column {column!r}")
    c = ord(column) - ord("M")
    return 14 - row, row - 13 - c


def _where(cell):
    column, row = cell_to_boardspace(cell)
    return f"{column} {row}"


def _variant_of(start):
    for name, make in VARIANTS.items():
        if make() == start:
            return name
    raise RecordError("Boardspace records start only from the standard, blitz (29, 19) or pro set-up")


def move_to_boardspace(move, mover):
    """The Boardspace move string of one of our moves made by ``mover``.

    >>> move_to_boardspace(Dance((0, 0), "W"), "white")
    'Move W N 14 3'
    """
    chip = CHIP[mover]
    if isinstance(move, Dance):
        return f"Move {chip} {_where(move.origin)} {DIRECTION_INDEX[move.direction]}"
    if isinstance(move, Enlarge):
        return f"Exchange {_where(move.at)} {chip}"
    if isinstance(move, Place):
        return f"Dropb {chip} {_where(move.at)}"
    if isinstance(move, LayTile):
        return f"Dropb {chip}T {_where(move.at)}"
    if isinstance(move, Pass):
        return "Pass"
    raise TypeError(f"not a move: {move!r}")


def _escape(text):
    return text.replace("\\", "\\\\").replace("]", "\\]")


def game_to_sgf(game, white_name="white", black_name="black"):
    """The Boardspace record of ``game`` (one node per action, each turn ended by ``Done``)."""
    variant = _variant_of(game.start)
    header = (f"(;GM[{SGF_GAME}]VV[1]SU[{variant}]P0[id \"{_escape(white_name)}\"]"
              f"P1[id \"{_escape(black_name)}\"]")
    nodes = ["; P0[0 Start P0]"]
    number = 1
    for pos, move in zip(game.positions, game.moves):
        player = PLAYER[pos.to_move]
        nodes.append(f"; {player}[{number} {_escape(move_to_boardspace(move, pos.to_move))}]")
        nodes.append(f"; {player}[{number + 1} Done]")
        number += 2
    if game.resigned is not None:
        nodes.append(f"; {PLAYER[game.resigned]}[{number} Resign]")
    return header + "\n" + "".join(nodes) + "\n)\n"


_TOKEN = re.compile(r"\s*(?:(\()|(\))|(;)|([A-Za-z][A-Za-z0-9]*)\s*((?:\[(?:\\.|[^\]\\])*\]\s*)+))", re.S)
_VALUE = re.compile(r"\[((?:\\.|[^\]\\])*)\]", re.S)


def parse_sgf_nodes(text):
    """The main line of an SGF text as a list of nodes, each a list of (property, [values])."""
    if not isinstance(text, str):
        raise RecordError("a game record must be text")
    nodes = []
    depth = 0
    closed_main = False
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise RecordError(f"SGF syntax error near {text[pos:pos + 20]!r}")
        pos = match.end()
        opening, closing, semicolon, name, values = match.groups()
        if opening:
            depth += 1
        elif closing:
            depth -= 1
            if depth < 0:
                raise RecordError("SGF syntax error: unbalanced ')'")
            closed_main = True
        elif closed_main:
            continue
        elif semicolon:
            nodes.append([])
        else:
            if not nodes:
                raise RecordError("SGF syntax error: property before the first node")
            found = [re.sub(r"\\(.)", r"\1", v) for v in _VALUE.findall(values)]
            nodes[-1].append((name.upper(), found))
    if depth != 0:
        raise RecordError("SGF syntax error: unbalanced parentheses")
    if not nodes:
        raise RecordError("empty game record")
    return nodes


def _cell_words(words, index):
    try:
        return cell_from_boardspace(words[index], int(words[index + 1]))
    except (IndexError, ValueError, TypeError):
        raise RecordError(f"bad cell in {' '.join(words)!r}") from None


def _direction_between(origin, cell):
    dq, dr = cell[0] - origin[0], cell[1] - origin[1]
    for index, (sq, sr) in enumerate(STEPS):
        for k in range(1, 16):
            if (sq * k, sr * k) == (dq, dr):
                return DIRECTIONS[index]
    raise RecordError(f"drop at {cell} is not in line with the picked stack at {origin}")


def actions_from_sgf(text):
    """(variant, [(player, action)]) of a record; an action is a Move, ``"resign"`` or None.

    Boardspace's UI steps (``Pick``, ``Drop``, ``Pickb`` + ``Dropb`` back on the stack) are
    folded away: the last ``Dropb``/``Move``/``Exchange``/``Pass`` before ``Done`` is the move.
    """
    nodes = parse_sgf_nodes(text)
    header = dict(nodes[0])
    game_number = header.get("GM", [SGF_GAME])[0].strip()
    if game_number != SGF_GAME:
        raise RecordError(f"not an Exxit record: GM[{game_number}] (Exxit is GM[{SGF_GAME}])")
    variant = (header.get("SU", ["exxit"])[0].split() or ["exxit"])[0].lower()
    if variant not in VARIANTS:
        raise RecordError(f"unknown Exxit variation {variant!r}")
    actions = []
    pending = None
    picked = None
    for node in nodes:
        for name, values in node:
            if name not in ("P0", "P1") or not values:
                continue
            if node is nodes[0] and values[0].startswith("id "):
                continue
            player = WHITE if name == "P0" else BLACK
            words = values[0].split()
            if words and re.fullmatch(r"-?\d+", words[0]):
                words = words[1:]
            if not words:
                continue
            keyword = words[0].lower()
            if keyword in ("start", "pick", "drop"):
                continue
            if keyword == "pickb":
                picked = _cell_words(words, 1)
            elif keyword == "dropb":
                if len(words) < 4:
                    raise RecordError(f"bad move string {values[0]!r}")
                cell = _cell_words(words, 2)
                piece = words[1].upper()
                if picked is not None:
                    pending = None if cell == picked else Dance(picked, _direction_between(picked, cell))
                    picked = None
                elif piece in ("WT", "BT"):
                    pending = LayTile(cell)
                elif piece in ("W", "B"):
                    pending = Place(cell)
                else:
                    raise RecordError(f"bad move string {values[0]!r}")
            elif keyword == "move":
                if len(words) != 5 or words[4] not in "012345" or len(words[4]) != 1:
                    raise RecordError(f"bad move string {values[0]!r}")
                pending = Dance(_cell_words(words, 2), DIRECTIONS[int(words[4])])
            elif keyword == "exchange":
                pending = Enlarge(_cell_words(words, 1))
            elif keyword == "pass":
                pending = Pass()
            elif keyword == "done":
                if pending is not None:
                    actions.append((player, pending))
                pending = None
                picked = None
            elif keyword == "resign":
                actions.append((player, "resign"))
            else:
                raise RecordError(f"unsupported move string {values[0]!r}")
    if pending is not None:
        actions.append((player, pending))
    return variant, actions


def game_from_sgf(text):
    """The :class:`Game` of a Boardspace record; raises :class:`RecordError` for an unreadable
    record and :class:`IllegalMoveError` (``index`` = move number from 0) for an illegal move."""
    variant, actions = actions_from_sgf(text)
    game = Game(VARIANTS[variant]())
    for index, (player, action) in enumerate(actions):
        try:
            if action == "resign":
                game.resign(player)
                continue
            if game.position.to_move != player and not game.is_over():
                raise IllegalMoveError(f"{action.text}: played by {player} but {game.position.to_move} is to move")
            game.play(action)
        except IllegalMoveError as error:
            error.index = index
            raise
    return game
