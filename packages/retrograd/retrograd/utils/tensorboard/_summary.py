"""The Summary protocol buffers a SummaryWriter writes, built from arrays.

Each function returns a ``tensorboard.compat.proto.summary_pb2.Summary``;
the tensorboard package is imported by the writer before any of them runs.
"""
from __future__ import annotations

import io
import struct
import wave
import zlib
from typing import Any

import numpy as np


def to_numpy(x: Any) -> np.ndarray:
    """An array of a tensor (detached, on the host), an array, or a Python number or list."""
    from retrograd.core import Tensor
    if isinstance(x, Tensor):
        return np.asarray(x.detach().numpy(force=True))
    return np.asarray(x)


def _pb():
    from tensorboard.compat.proto import summary_pb2
    return summary_pb2


def scalar(tag: str, value: Any, new_style: bool = False, double_precision: bool = False) -> Any:
    arr = to_numpy(value).squeeze()
    if arr.ndim != 0:
        raise ValueError(f"add_scalar: the value of {tag!r} must hold one number, got shape {arr.shape}")
    v = float(arr)
    pb = _pb()
    if not new_style:
        return pb.Summary(value=[pb.Summary.Value(tag=tag, simple_value=v)])
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    tensor = (TensorProto(double_val=[v], dtype="DT_DOUBLE", tensor_shape=TensorShapeProto()) if double_precision
              else TensorProto(float_val=[v], dtype="DT_FLOAT", tensor_shape=TensorShapeProto()))
    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(plugin_name="scalars"))
    return pb.Summary(value=[pb.Summary.Value(tag=tag, tensor=tensor, metadata=meta)])


def tensor(tag: str, value: Any) -> Any:
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    arr = to_numpy(value)
    dims = [TensorShapeProto.Dim(size=int(n)) for n in arr.shape]
    if arr.dtype.kind == "f":
        proto = TensorProto(dtype="DT_FLOAT", float_val=arr.astype(np.float32).reshape(-1).tolist(),
                            tensor_shape=TensorShapeProto(dim=dims))
    elif arr.dtype.kind in "iub":
        proto = TensorProto(dtype="DT_INT64", int64_val=arr.astype(np.int64).reshape(-1).tolist(),
                            tensor_shape=TensorShapeProto(dim=dims))
    else:
        raise TypeError(f"add_tensor: tensors of dtype {arr.dtype} are not supported (floating or integer only)")
    pb = _pb()
    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(plugin_name="tensors"))
    return pb.Summary(value=[pb.Summary.Value(tag=tag, tensor=proto, metadata=meta)])


def _default_bins() -> np.ndarray:
    # TensorFlow's buckets: +-1e-12 growing by 10% to 1e20, and 0
    pos = 1e-12 * 1.1 ** np.arange(int(np.ceil(np.log(1e32) / np.log(1.1))))
    pos = pos[pos < 1e20]
    return np.concatenate([-pos[::-1], [0.0], pos])


def histogram(tag: str, values: Any, bins: Any = "tensorflow", max_bins: int | None = None) -> Any:
    arr = to_numpy(values).astype(np.float64).reshape(-1)
    if arr.size == 0:
        raise ValueError(f"add_histogram: the values of {tag!r} are empty")
    counts, limits = np.histogram(arr, bins=_default_bins() if isinstance(bins, str) and bins == "tensorflow"
                                  else bins)
    if max_bins is not None and len(counts) > max_bins:
        # merge groups of len // max_bins neighbouring buckets (torch's grouping)
        group = len(counts) // max_bins
        counts = np.pad(counts, (0, (-len(counts)) % group)).reshape(-1, group).sum(axis=1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    # TensorBoard stores right edges only: keep the filled range plus one empty bucket before it, whose right
    # edge is the range's left edge
    filled = np.flatnonzero(counts)
    first, last = int(filled[0]), int(filled[-1])
    limits = limits[first:last + 2]
    counts = np.concatenate([[0], counts[first:last + 1]]) if first == 0 else counts[first - 1:last + 1]
    return histogram_raw(tag, float(arr.min()), float(arr.max()), arr.size, float(arr.sum()),
                         float((arr * arr).sum()), limits.tolist(), counts.tolist())


def histogram_raw(tag: str, min: float, max: float, num: int, sum: float, sum_squares: float,
                  bucket_limits: Any, bucket_counts: Any) -> Any:
    from tensorboard.compat.proto.summary_pb2 import HistogramProto
    limits, counts = list(to_numpy(bucket_limits).reshape(-1)), list(to_numpy(bucket_counts).reshape(-1))
    if len(limits) != len(counts):
        raise ValueError(f"add_histogram_raw: {len(limits)} bucket limits but {len(counts)} bucket counts; give "
                         "one limit (the right edge) per bucket")
    hist = HistogramProto(min=min, max=max, num=int(num), sum=sum, sum_squares=sum_squares,
                          bucket_limit=[float(v) for v in limits], bucket=[float(v) for v in counts])
    pb = _pb()
    return pb.Summary(value=[pb.Summary.Value(tag=tag, histo=hist)])


def _png(hwc: np.ndarray) -> bytes:
    # an 8-bit PNG of an (H, W, C) array, C in 1 (grey), 3 (RGB) or 4 (RGBA)
    h, w, c = hwc.shape
    kind = {1: 0, 3: 2, 4: 6}[c]
    raw = b"".join(b"\x00" + hwc[row].tobytes() for row in range(h))

    def chunk(name: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + name + data + struct.pack(">I", zlib.crc32(name + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, kind, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def to_hwc(arr: np.ndarray, dataformats: str) -> np.ndarray:
    """An image array in ``dataformats`` ('CHW', 'HWC', 'HW', 'NCHW' ... ) as (H, W, 3 or 4)."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or set(fmt) - set("NCHW") or arr.ndim != len(fmt):
        raise ValueError(f"the image has {arr.ndim} dims but dataformats is {dataformats!r}: give one letter per "
                         "dim from N, C, H, W (e.g. 'CHW', 'HWC', 'HW', 'NCHW')")
    if "N" in fmt:
        arr = arr.transpose([fmt.index(d) for d in ("N", "C", "H", "W") if d in fmt])
        if "C" not in fmt:
            arr = arr[:, None]
        arr = _grid(arr)
        fmt = "CHW"
    if "C" not in fmt:
        arr, fmt = arr[None], "C" + fmt
    chw = arr.transpose([fmt.index(d) for d in "CHW"])
    if chw.shape[0] == 1:
        chw = np.repeat(chw, 3, axis=0)
    if chw.shape[0] not in (3, 4):
        raise ValueError(f"an image needs 1, 3 or 4 channels, got {chw.shape[0]}")
    return chw.transpose(1, 2, 0)


def _grid(nchw: np.ndarray, ncols: int = 8) -> np.ndarray:
    # images side by side, ncols to a row (torch's layout, no padding)
    if nchw.shape[1] == 1:
        nchw = np.repeat(nchw, 3, axis=1)
    n, c, h, w = nchw.shape
    cols = min(n, ncols)
    rows = -(-n // cols)
    canvas = np.zeros((c, h * rows, w * cols), dtype=nchw.dtype)
    for i in range(n):
        y, x = divmod(i, cols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = nchw[i]
    return canvas


def image(tag: str, img: Any, dataformats: str = "CHW") -> Any:
    arr = to_numpy(img)
    hwc = to_hwc(arr, dataformats)
    # floats are taken in [0, 1], as torch; uint8 as is
    scale = 1 if arr.dtype == np.uint8 else 255
    pixels = np.clip(hwc.astype(np.float64) * scale, 0, 255).astype(np.uint8)     # (truncated, as torch)
    pb = _pb()
    h, w, c = pixels.shape
    img_pb = pb.Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=_png(np.ascontiguousarray(pixels)))
    return pb.Summary(value=[pb.Summary.Value(tag=tag, image=img_pb)])


def figure_to_image(figure: Any) -> np.ndarray:
    """A matplotlib figure rendered to a (3, H, W) uint8 array (the figure is closed)."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    plt.close(figure)
    return rgba[..., :3].transpose(2, 0, 1).copy()


def text(tag: str, value: str) -> Any:
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    pb = _pb()
    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[value.encode("utf-8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return pb.Summary(value=[pb.Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


def audio(tag: str, snd: Any, sample_rate: int) -> Any:
    arr = to_numpy(snd).astype(np.float64).squeeze()
    if arr.ndim != 1:
        raise ValueError(f"add_audio: expected a 1-D sound (L,) or (1, L), got shape {to_numpy(snd).shape}")
    if arr.size and np.abs(arr).max() > 1:
        raise ValueError("add_audio: the samples must lie in [-1, 1]")
    pcm = (arr * 32767.0).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(int(sample_rate))
        wav.writeframes(pcm.tobytes())
    pb = _pb()
    snd_pb = pb.Summary.Audio(sample_rate=float(sample_rate), num_channels=1, length_frames=arr.size,
                              encoded_audio_string=buf.getvalue(), content_type="audio/wav")
    return pb.Summary(value=[pb.Summary.Value(tag=tag, audio=snd_pb)])


def pr_curve_raw(tag: str, tp: Any, fp: Any, tn: Any, fn: Any, precision: Any, recall: Any,
                 num_thresholds: int = 127) -> Any:
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
    rows = [to_numpy(v).astype(np.float64).reshape(-1) for v in (tp, fp, tn, fn, precision, recall)]
    if len({r.size for r in rows}) != 1:
        raise ValueError("add_pr_curve_raw: tp, fp, tn, fn, precision and recall must have one length")
    data = np.stack(rows)
    pb = _pb()
    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
        plugin_name="pr_curves",
        content=PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()))
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(), tensor_shape=TensorShapeProto(
        dim=[TensorShapeProto.Dim(size=d) for d in data.shape]))
    return pb.Summary(value=[pb.Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def pr_curve(tag: str, labels: Any, predictions: Any, num_thresholds: int = 127, weights: Any = None) -> Any:
    # counts of true/false positives at num_thresholds evenly spaced thresholds in [0, 1]
    num_thresholds = min(num_thresholds, 127)
    lab = to_numpy(labels).reshape(-1).astype(bool)
    pred = to_numpy(predictions).reshape(-1).astype(np.float64)
    w = np.ones_like(pred) if weights is None else to_numpy(weights).reshape(-1).astype(np.float64)
    buckets = np.floor(pred * (num_thresholds - 1)).astype(np.int64).clip(0, num_thresholds - 1)
    tp_hist = np.bincount(buckets, weights=w * lab, minlength=num_thresholds)
    fp_hist = np.bincount(buckets, weights=w * ~lab, minlength=num_thresholds)
    tp = np.cumsum(tp_hist[::-1])[::-1]
    fp = np.cumsum(fp_hist[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(1e-7, tp + fp)
    recall = tp / np.maximum(1e-7, tp + fn)
    return pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds)


def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None) -> tuple:
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("add_hparams: hparam_dict and metric_dict must be dicts")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("add_hparams: hparam_domain_discrete must be a dict of lists")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"add_hparams: hparam_domain_discrete[{k!r}] must be a list of values of the type of "
                            f"hparam_dict[{k!r}]")
    start = SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, bool):
            start.hparams[k].bool_value = v
            kind, field = "DATA_TYPE_BOOL", "bool_value"
        elif isinstance(v, (int, float)):
            start.hparams[k].number_value = v
            kind, field = "DATA_TYPE_FLOAT64", "number_value"
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            kind, field = "DATA_TYPE_STRING", "string_value"
        else:
            from retrograd.core import Tensor
            if not isinstance(v, Tensor):
                raise ValueError(f"add_hparams: the value of {k!r} must be a bool, int, float, str, None or a "
                                 f"one-element tensor, not {type(v).__name__}")
            start.hparams[k].number_value = float(to_numpy(v).item())
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        discrete = (struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domains[k]])
                    if k in domains else None)
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=discrete))
    pb = _pb()

    def plugin_summary(tag: str, data: HParamsPluginData) -> Any:
        meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
            plugin_name=metadata.PLUGIN_NAME, content=data.SerializeToString()))
        return pb.Summary(value=[pb.Summary.Value(tag=tag, metadata=meta)])
    version = metadata.PLUGIN_DATA_VERSION
    experiment = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (plugin_summary(metadata.EXPERIMENT_TAG, HParamsPluginData(experiment=experiment, version=version)),
            plugin_summary(metadata.SESSION_START_INFO_TAG, HParamsPluginData(session_start_info=start,
                                                                              version=version)),
            plugin_summary(metadata.SESSION_END_INFO_TAG, HParamsPluginData(
                session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")), version=version)))
