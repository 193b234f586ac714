"""rg.utils.tensorboard.SummaryWriter: the event files it writes hold what
torch's SummaryWriter writes for the same calls (read back with
tensorboard's own event reader)."""
import os

import numpy as np
import pytest

import retrograd as rg

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader  # noqa: E402

from retrograd.utils.tensorboard import SummaryWriter  # noqa: E402


def _events(log_dir):
    files = sorted(f for f in os.listdir(log_dir) if f.startswith("events.out.tfevents"))
    assert files, f"no event file in {log_dir}"
    out = []
    for f in files:
        out += [e for e in LegacyEventFileLoader(os.path.join(log_dir, f)).Load() if e.HasField("summary")]
    return out


def _values(events):
    return [(e.step, v) for e in events for v in e.summary.value]


def test_scalars_round_trip(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalar("loss", rg.tensor(1.0 / (step + 1)), step)
        w.add_scalar("lr", 0.5, 7, new_style=True, double_precision=True)
    vals = _values(_events(tmp_path))
    assert [(s, v.tag, round(v.simple_value, 6)) for s, v in vals[:3]] == [(0, "loss", 1.0), (1, "loss", 0.5),
                                                                          (2, "loss", 0.333333)]
    step, lr = vals[3]
    assert step == 7 and lr.tensor.double_val == [0.5] and lr.metadata.plugin_data.plugin_name == "scalars"
    with pytest.raises(ValueError, match="one number"):
        SummaryWriter(tmp_path / "x").add_scalar("bad", rg.ones(2))


def test_add_scalars_writes_one_run_per_key(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("loss", {"train": 1.0, "val": 2.0}, 3)
    for key, value in (("train", 1.0), ("val", 2.0)):
        (step, v), = _values(_events(tmp_path / f"loss_{key}"))
        assert step == 3 and v.tag == "loss" and v.simple_value == value


@pytest.mark.oracle
def test_histogram_image_text_match_torch(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    rng = np.random.default_rng(0)
    values = rng.standard_normal(200)
    img = rng.random((3, 5, 4))
    batch = rng.random((3, 1, 4, 4))
    for writer_cls, conv, d in ((SummaryWriter, rg.tensor, tmp_path / "rg"), (TorchWriter, torch.tensor,
                                                                              tmp_path / "torch")):
        with writer_cls(str(d)) as w:
            w.add_histogram("h", conv(values), 1)
            w.add_histogram("h_auto", conv(values), 1, bins="auto")
            w.add_image("img", conv(img), 2)
            w.add_image("hwc", (img.transpose(1, 2, 0) * 255).astype(np.uint8), 2, dataformats="HWC")
            w.add_images("batch", conv(batch), 3)
            w.add_text("note", "hello **world**", 4)
    ours, theirs = _values(_events(tmp_path / "rg")), _values(_events(tmp_path / "torch"))
    assert [(s, v.tag) for s, v in ours] == [(s, v.tag) for s, v in theirs]
    for (_, a), (_, b) in zip(ours, theirs):
        if a.HasField("histo"):
            np.testing.assert_allclose(a.histo.bucket_limit, b.histo.bucket_limit, rtol=1e-12)
            assert list(a.histo.bucket) == list(b.histo.bucket)
            assert a.histo.num == b.histo.num and np.isclose(a.histo.sum_squares, b.histo.sum_squares)
        elif a.HasField("image"):
            assert (a.image.height, a.image.width, a.image.colorspace) == (b.image.height, b.image.width,
                                                                          b.image.colorspace)
            assert _decode_png(a.image.encoded_image_string).tolist() == \
                _decode_png(b.image.encoded_image_string).tolist()
        else:
            assert a.tensor.string_val == b.tensor.string_val
            assert a.metadata.plugin_data.plugin_name == b.metadata.plugin_data.plugin_name == "text"


def _decode_png(data):
    import io
    PIL = pytest.importorskip("PIL.Image")
    return np.asarray(PIL.open(io.BytesIO(data)))


def test_hparams_audio_pr_curve_and_purge(tmp_path):
    with SummaryWriter(tmp_path, purge_step=5) as w:
        w.add_hparams({"lr": 0.1, "opt": "sgd", "nest": True}, {"acc": 0.9}, run_name="t0")
        w.add_audio("tone", rg.sin(rg.arange(100.0)) * 0.5, 0, sample_rate=8000)
        w.add_pr_curve("pr", rg.tensor([0, 1, 1, 0]), rg.tensor([0.1, 0.8, 0.6, 0.4]), 0, num_thresholds=5)
    tags = [v.tag for _, v in _values(_events(tmp_path / "t0"))]
    assert tags == ["_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info", "acc"]
    vals = _values(_events(tmp_path))
    audio = next(v for _, v in vals if v.tag == "tone").audio
    assert audio.sample_rate == 8000 and audio.encoded_audio_string[:4] == b"RIFF"
    pr = next(v for _, v in vals if v.tag == "pr").tensor
    table = np.array(pr.float_val).reshape(6, 5)
    assert table[0].tolist() == [2, 2, 2, 1, 0] and table[1].tolist() == [2, 1, 0, 0, 0]   # tp, fp per threshold
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        SummaryWriter(tmp_path / "y").add_audio("loud", rg.ones(3) * 2)
    with pytest.raises(NotImplementedError, match="TorchScript"):
        SummaryWriter(tmp_path / "z").add_graph(rg.nn.Linear(1, 1))


def test_missing_tensorboard_is_a_clear_import_error(monkeypatch, tmp_path):
    import builtins
    real = builtins.__import__

    def no_tensorboard(name, *args, **kwargs):
        if name == "tensorboard" or name.startswith("tensorboard."):
            raise ImportError("no tensorboard here")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_tensorboard)
    with pytest.raises(ImportError, match="pip install tensorboard"):
        SummaryWriter(tmp_path)
