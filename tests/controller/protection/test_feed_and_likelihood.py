

def _collected_law(total: int, collected: int, shelves: int) -> dict[tuple[int, ...], float]:
    """The machine fed cards 0..collected-1 in that order on top of the others in a uniformly
    random order: every order of the undealt part and every shelf-and-side choice enumerated."""
    law: Counter[tuple[int, ...]] = Counter()
    stubs = list(itertools.permutations(range(collected, total)))
    for stub in stubs:
        fed = [*range(collected), *stub]
        for choices in itertools.product(range(2 * shelves), repeat=total):
            stacks: list[list[int]] = [[] for _ in range(shelves)]
            for place, choice in enumerate(choices):
                shelf, on_top = divmod(choice, 2)
                if on_top:
                    stacks[shelf].insert(0, fed[place])
                else:
                    stacks[shelf].append(fed[place])
            law[tuple(card for stack in stacks for card in stack)] += 1
    n = len(stubs) * (2 * shelves) ** total
    return {order: count / n for order, count in law.items()}


@pytest.mark.parametrize(("total", "collected", "shelves"), [(5, 2, 2), (5, 3, 2), (5, 2, 3)])
def test_collected_likelihood_is_the_machines_exact_law(total: int, collected: int,
                                                        shelves: int) -> None:
    """The collected-feed likelihood (undealt part's order unknown) equals the enumerated law
    of the dealt prefix at every length, and sums to 1 over all prefixes."""
    law = _collected_law(total, collected, shelves)
    for m in range(total + 1):
        prefixes: Counter[tuple[int, ...]] = Counter()
        for order, p in law.items():
            prefixes[order[:m]] += p
        fair = math.factorial(total - m) / math.factorial(total)
        sum_p = 0.0
        for prefix in itertools.permutations(range(total), m):
            tokens = [card if card < collected else None for card in prefix]
            p = collected_ratio(tokens, collected, total, shelves) * fair
            assert p == pytest.approx(prefixes.get(prefix, 0.0), abs=1e-12)
            sum_p += p
        assert sum_p == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("seed", [1, 2])
def test_ten_shelf_machine_fed_collected_cards_is_flagged(seed: int) -> None:
    """Nine sets a deck (27 cards), the machine fed the collected cards on top of the undealt
    ones: the likelihood test, using which dealt cards came from the undealt part, flags it
    within 5 decks (the valleys of the known-place cards alone need about 16 on average)."""
    assert _first(ShuffleModel.ONE_PASS_10, 7, 9, Feed.COLLECTED, seed)[
        MonitorId.ONE_PASS_LR] <= 5
