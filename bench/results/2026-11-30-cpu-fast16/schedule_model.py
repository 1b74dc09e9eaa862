"""Schedule model of sd15-self-16's forward at 16 threads: how much of a call threads spend idle
at its end, for orders and task sizes of src/cpu/schedule.h's StreamBlocks.

Each of 16 streams has a list of task lengths (us at ~100 GFLOP/s per thread: a 48-row block's
key part 40 us, a 64-row block's 53 us). A thread takes its own stream's tasks in order, then the
next task of other streams (walking back from its range), one shared counter per stream, as
StreamBlocks does; threads run at fixed speeds drawn from [1, spread]. Prints the mean makespan
over the ideal (all work / sum of speeds) over 2000 draws. Per-task costs of stolen parts (a
second Q^T pack, the merge) are left out.

    python3 schedule_model.py
"""
import heapq
import random
import statistics

THREADS = 16
PART_48, PART_64 = 40.0, 53.3  # us per key part of a 48- and a 64-row query block


def makespan_over_ideal(tasks_per_stream, speeds):
    streams = len(tasks_per_stream)
    taken = [0] * streams
    walks = []
    for t in range(THREADS):
        first = streams * t // THREADS
        owned = streams * (t + 1) // THREADS - first
        walks.append([first + k for k in range(owned)]
                     + [(first - (k + 1)) % streams for k in range(streams - owned)])
    visited = [0] * THREADS
    clock = [(0.0, t) for t in range(THREADS)]
    end = 0.0
    while clock:
        now, t = heapq.heappop(clock)
        while visited[t] < streams and taken[walks[t][visited[t]]] >= len(
                tasks_per_stream[walks[t][visited[t]]]):
            visited[t] += 1
        if visited[t] == streams:
            end = max(end, now)
            continue
        s = walks[t][visited[t]]
        length = tasks_per_stream[s][taken[s]]
        taken[s] += 1
        heapq.heappush(clock, (now + length / speeds[t], t))
    ideal = sum(map(sum, tasks_per_stream)) / sum(speeds)
    return end / ideal


def mean_over_draws(tasks, spread, draws=2000):
    rng = random.Random(1)
    return statistics.mean(
        makespan_over_ideal([list(tasks)] * THREADS,
                            [rng.uniform(1.0, spread) for _ in range(THREADS)])
        for _ in range(draws))


ORDERS = {
    "no key split (5 blocks of 256 keys)": [2 * PART_48] * 4 + [2 * PART_64],
    "main: key split, 64-row block last": [PART_48] * 8 + [PART_64] * 2,
    "branch: 64-row block first": [PART_64] * 2 + [PART_48] * 8,
    "64 first, last block in 4 parts": [PART_64] * 2 + [PART_48] * 6 + [PART_48 / 2] * 4,
    "64 first, every block in 4 parts": [PART_64 / 2] * 4 + [PART_48 / 2] * 16,
}

if __name__ == "__main__":
    for spread in (1.3, 1.7):
        print(f"thread speeds in [1, {spread}]")
        for name, tasks in ORDERS.items():
            print(f"  {name:36s} makespan / ideal {mean_over_draws(tasks, spread):.3f}")
