# expect: not implemented
# style: the stub, untouched
# bug: nothing written yet
class PCG32:
    def __init__(self, seed, stream=54):
        raise NotImplementedError("M06.3: PCG32.__init__")

    def next_u32(self):
        raise NotImplementedError("M06.3: PCG32.next_u32")

    def uniform(self):
        raise NotImplementedError("M06.3: PCG32.uniform")
