"""rules.dances_a_disc_off: which stacks' heights decide the forced dances."""
import rules
from rules import BLACK, WHITE, Position

LINE = {(0, 0): WHITE, (1, 0): WHITE, (2, 0): BLACK, (3, 0): BLACK}


def found(pos, cells):
    return {(cell, height): {c: [d.text for d in dances[c]] for c in rules.COLOURS}
            for cell, height, dances in rules.dances_a_disc_off(pos, cells)}


def test_a_disc_more_that_makes_a_dance_is_named_with_it():
    pos = Position(LINE, {(0, 0): (WHITE, WHITE), (3, 0): (BLACK,)})
    assert rules.forced_dances(pos, WHITE) == rules.forced_dances(pos, BLACK) == []
    # 3 discs reach the black stack 3 cells away; 1 disc or a black 2-stack reach nothing
    assert found(pos, [(0, 0), (3, 0)]) == {((0, 0), 3): {WHITE: ["dance 0,0 E"], BLACK: []}}


def test_only_the_cells_asked_about_and_only_heights_that_change_the_dances():
    pos = Position(LINE, {(0, 0): (WHITE,), (1, 0): (WHITE,), (3, 0): (BLACK,)})
    assert found(pos, []) == {}
    assert found(pos, [(0, 0)]) == {}
    assert found(pos, [(1, 0), (3, 0)]) == {((1, 0), 2): {WHITE: ["dance 1,0 E"], BLACK: []},
                                            ((3, 0), 2): {WHITE: [], BLACK: ["dance 3,0 W"]}}


def test_a_disc_more_than_a_set_has_is_not_tried():
    full = Position(LINE, {(0, 0): (WHITE,) * 8, (3, 0): (BLACK,) * 8})   # all 16 discs on the table
    assert [height for _, height, _ in rules.dances_a_disc_off(full, [(0, 0), (3, 0)])] == [7, 7]


def test_a_disc_moved_between_the_unsure_stacks_keeps_their_sum():
    pos = Position(LINE, {(0, 0): (WHITE,), (2, 0): (BLACK,), (3, 0): (BLACK, BLACK)})
    moved = {(a, b): {c: [d.text for d in dances[c]] for c in rules.COLOURS}
             for a, b, dances in rules.dances_a_disc_moved(pos, [(0, 0), (2, 0), (3, 0)])}
    assert rules.forced_dances(pos, WHITE) == rules.forced_dances(pos, BLACK) == []
    # a disc of the black 2-stack on the white 1-stack: it then reaches the black 1-stack 2 cells
    # away; on the black 1-stack: that one reaches the white stack. A 1-stack has no disc to give.
    assert moved == {((3, 0), (0, 0)): {WHITE: ["dance 0,0 E"], BLACK: []},
                     ((3, 0), (2, 0)): {WHITE: [], BLACK: ["dance 2,0 W"]}}
    assert rules.dances_a_disc_moved(pos, [(0, 0), (2, 0)]) == []
