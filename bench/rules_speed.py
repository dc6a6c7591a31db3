"""Speed of the rules engine (pure Python, one process).

(a) games_per_s: complete random standard games (39 tiles) per second: from the opening
    diamond, each turn a uniformly random choice among rules.legal_moves, through rules.Game (so
    the threefold-repetition history is kept), until the game is over.
(b) analysis_us: microseconds per full analysis -- forced dances of both colours, score and legal
    moves -- of end-game positions of the 39-tile game: from random standard games that end
    with the supply exhausted, the position before the final enlargement (35-38 tiles on the
    table, game not over, so legal moves are generated) and the final 39-tile position.  Every
    analysis is of a distinct Position object freshly built from JSON, so no cache of the engine
    can serve it (enlargements' cascades, which the engine works out on first use, are read
    too); per kind the median of 5 rounds; the figure is the mean of both kinds.

Times are CPU time of this process (time.process_time), so that other jobs on the shared
machine do not inflate them; the games' wall-clock rate is printed beside.

Usage: python bench/rules_speed.py [--games N] [--positions N]
The last line is ``games_per_s=N analysis_us=N``.
"""

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rules  # noqa: E402


def random_game(seed):
    rnd = random.Random(seed)
    game = rules.Game(rules.Position.standard())
    while not game.is_over():
        game.play(rnd.choice(game.legal_moves()))
    return game


def time_games(count):
    plies = 0
    reasons = {}
    start, start_wall = time.process_time(), time.perf_counter()
    for seed in range(count):
        game = random_game(seed)
        plies += len(game.moves)
        reasons[game.outcome.reason] = reasons.get(game.outcome.reason, 0) + 1
    elapsed, wall = time.process_time() - start, time.perf_counter() - start_wall
    return count / elapsed, count / wall, plies / count, reasons


def end_game_positions(wanted):
    """(positions before the last move, final 39-tile positions) as JSON, from random games."""
    live, final = [], []
    seed = 10_000
    while len(final) < wanted:
        game = random_game(seed)
        seed += 1
        if game.outcome.reason == "supply_exhausted" and len(game.position.tiles) == 39:
            live.append(rules.position_to_json(game.positions[-2]))
            final.append(rules.position_to_json(game.position))
    return live, final


def time_analysis(objs, repeat, rounds=5):
    """Median over ``rounds`` of the mean time per analysis; fresh Position objects each round."""
    forced_dances, score, legal_moves = rules.forced_dances, rules.score, rules.legal_moves
    times = []
    for _ in range(rounds):
        positions = [rules.position_from_json(obj) for obj in objs for _ in range(repeat)]
        start = time.process_time()
        for pos in positions:
            forced_dances(pos, "white")
            forced_dances(pos, "black")
            score(pos)
            for move in legal_moves(pos):
                if move.kind == "enlarge":
                    move.new_tiles  # worked out on first use: include the cascades
        times.append((time.process_time() - start) / len(positions) * 1e6)
    return statistics.median(times)


def time_full_json_analysis(objs, repeat):
    positions = [rules.position_from_json(obj) for obj in objs for _ in range(repeat)]
    start = time.process_time()
    for pos in positions:
        rules.analyze(pos)
    return (time.process_time() - start) / len(positions) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="random games to time (default 1000)")
    parser.add_argument("--positions", type=int, default=100, help="end-game positions of each kind (default 100)")
    args = parser.parse_args()

    print(f"python {platform.python_version()} on {platform.machine()}, one process")
    games_per_s, games_per_wall_s, plies, reasons = time_games(args.games)
    print(f"(a) {args.games} random standard games: {games_per_s:.0f} games per CPU second "
          f"({games_per_wall_s:.0f} per wall-clock second), {plies:.1f} moves per game, ends: {reasons}")
    live, final = end_game_positions(args.positions)
    repeat = 20
    live_us = time_analysis(live, repeat)
    final_us = time_analysis(final, repeat)
    analysis_us = (live_us + final_us) / 2
    print(f"(b) analysis of {len(live) * repeat} distinct positions before the last enlargement: "
          f"{live_us:.1f} us")
    print(f"    analysis of {len(final) * repeat} distinct final 39-tile positions (game over): {final_us:.1f} us")
    print(f"    rules.analyze (the whole JSON answer incl. islands) of the positions before the last move: "
          f"{time_full_json_analysis(live, repeat):.1f} us")
    print(f"    mean of both kinds: {analysis_us:.1f} us")
    print(f"games_per_s={games_per_s:.0f} analysis_us={analysis_us:.0f}")


if __name__ == "__main__":
    main()
