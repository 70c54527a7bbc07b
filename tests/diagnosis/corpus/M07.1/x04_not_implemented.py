# expect: not implemented
# style: the stub, untouched
# bug: nothing written yet


def sample_categorical(probs, u):
    raise NotImplementedError("M07.1: sample_categorical")
