"""vision.fitting: the stacks' heights fitted to the discs the players count in their reserves."""
import pytest

import rules
from vision.fitting import FITTED_CONFIDENCE, FitError, fit_heights


def stack(q, r, discs, chances=None, confidence=0.9):
    s = {"q": q, "r": r, "discs": list(discs), "height": len(discs), "top": discs[-1], "confidence": confidence}
    if chances is not None:
        s["height_chances"] = chances
    return s


def reading(*stacks):
    return {"format": "exxit-position/1", "stacks": list(stacks),
            "tiles": [{"q": q, "r": 0, "colour": "white"} for q in range(4)]}


def heights(position):
    return {(s["q"], s["r"]): len(s["discs"]) for s in position["stacks"]}


def test_a_reading_that_adds_up_is_kept_and_the_reserves_written():
    read = reading(stack(0, 0, ["white", "white"], [0.3, 0.7]), stack(1, 0, ["black"], [0.6, 0.4]))
    fitted, changes = fit_heights(read, {"white": 6, "black": 7})
    assert changes == [] and fitted["stacks"] == read["stacks"]
    assert fitted["reserves"] == {"white": 6, "black": 7} and fitted["reserves_counted"] is True
    rules.position_from_json(fitted)                          # a position that can occur


def test_a_disc_short_goes_to_the_stack_likeliest_to_be_taller():
    read = reading(stack(0, 0, ["white"], [0.9, 0.1]), stack(1, 0, ["black"], [0.55, 0.45]),
                   stack(3, 0, ["black"], [0.8, 0.2]))
    fitted, changes = fit_heights(read, {"white": 7, "black": 5})     # 4 discs on the table, 3 read
    assert changes == [{"at": [1, 0], "read": 1, "height": 2}]
    (taller,) = [s for s in fitted["stacks"] if s["q"] == 1]
    assert taller["discs"] == [None, "black"] and taller["height"] == 2      # its new disc's colour unknown
    assert taller["confidence"] == FITTED_CONFIDENCE                         # flagged for the user to look


def test_a_disc_too_many_comes_off_under_the_top():
    read = reading(stack(0, 0, ["black", "white", "white"], [0.1, 0.3, 0.6]), stack(1, 0, ["black", "black"], [0.05, 0.95]))
    fitted, changes = fit_heights(read, {"white": 7, "black": 5})     # 4 on the table, 5 read
    assert changes == [{"at": [0, 0], "read": 3, "height": 2}]
    assert heights(fitted) == {(0, 0): 2, (1, 0): 2}
    assert [s["discs"] for s in fitted["stacks"]][0] == ["black", "white"]


def test_the_likeliest_whole_reading_wins_not_each_stack_alone():
    # two discs short: raising the one doubtful stack twice (0.5 x 0.01) is less likely than
    # raising it and another once each (0.45 x 0.3 against 0.55 x 0.7)
    read = reading(stack(0, 0, ["white"], [0.5, 0.45, 0.05]), stack(1, 0, ["white"], [0.7, 0.3, 0.0]))
    fitted, _ = fit_heights(read, {"white": 4, "black": 8})
    assert heights(fitted) == {(0, 0): 2, (1, 0): 2}


def test_stacks_corrected_by_hand_keep_their_height():
    read = reading(stack(0, 0, ["white"]), stack(1, 0, ["black"], [0.9, 0.1]))   # (0, 0): no chances
    fitted, changes = fit_heights(read, {"white": 7, "black": 6})
    assert changes == [{"at": [1, 0], "read": 1, "height": 2}]


def test_reserves_the_stacks_cannot_meet_are_refused_with_why():
    read = reading(stack(0, 0, ["white"], [0.9, 0.1]), stack(1, 0, ["black"], [0.9, 0.1]))
    with pytest.raises(FitError, match="1 disc is on the table, but the 2 stacks read hold at least 2"):
        fit_heights(read, {"white": 8, "black": 7})
    with pytest.raises(FitError, match="hold at most 4"):
        fit_heights(read, {"white": 3, "black": 3})
    read = reading(stack(0, 0, ["white"], [0.9, 0.1]), stack(1, 0, ["white"], [0.9, 0.1]))
    with pytest.raises(FitError, match="2 stacks have a white top, but with 7 white discs in reserve 1 disc is on"):
        fit_heights(read, {"white": 7, "black": 7})


def test_too_many_tops_of_a_colour_name_the_least_sure_of_them():
    read = reading(stack(0, 0, ["white"], [0.9, 0.1]), stack(1, 0, ["white"], [0.9, 0.1]),
                   stack(2, 0, ["white"], [0.9, 0.1]), stack(3, 0, ["black"], [0.9, 0.1]))
    read["stacks"][0]["top_confidence"], read["stacks"][1]["top_confidence"] = 0.99, 0.3
    read["stacks"][2]["top_confidence"] = 0.6
    with pytest.raises(FitError, match=r"the stacks' colours \(the least sure of them: 1,0\)$"):
        fit_heights(read, {"white": 6, "black": 6})                   # 2 white on the table, 3 white tops
    with pytest.raises(FitError, match=r"\(the least sure of them: 1,0; 2,0\)$"):
        fit_heights(read, {"white": 7, "black": 5})                   # 1 white on the table


def test_too_many_tops_corrected_by_hand_name_no_stack():
    read = reading(stack(0, 0, ["white"]), stack(1, 0, ["white"]))
    for s in read["stacks"]:
        del s["confidence"]                                             # as the page sends corrected stacks
    with pytest.raises(FitError, match=r"the stacks' colours$"):
        fit_heights(read, {"white": 7, "black": 7})


def test_side_colours_read_beyond_the_reserves_are_left_unread_in_the_least_sure_stack():
    read = reading(stack(0, 0, ["white", "black"], [0.1, 0.9], confidence=0.9),
                   stack(1, 0, ["white", "white", "black"], [0.05, 0.15, 0.8], confidence=0.6))
    before = [list(s["discs"]) for s in read["stacks"]]
    fitted, changes = fit_heights(read, {"white": 6, "black": 5})     # 2 white on the table, 3 read
    assert [s["discs"] for s in fitted["stacks"]] == [["white", "black"], [None, "white", "black"]]
    assert changes == [{"at": [1, 0], "read": 3, "height": 3, "unread": 1}]
    assert fitted["stacks"][1]["confidence"] == FITTED_CONFIDENCE
    assert [s["discs"] for s in read["stacks"]] == before            # the reading given is not changed
    rules.position_from_json(fitted)


@pytest.mark.parametrize("reserves", [{"white": 9, "black": 0}, {"white": -1, "black": 0}, {"white": 1},
                                      {"white": 1.5, "black": 0}, {"white": True, "black": 0}, [1, 2]])
def test_bad_reserves_are_refused(reserves):
    with pytest.raises(FitError, match="reserve"):
        fit_heights(reading(stack(0, 0, ["white"], [0.9, 0.1])), reserves)
