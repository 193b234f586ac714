BUILT_AGAINST: tuple[int, int]
