# CUDA streams, as PyTorch's engine uses them (Note [Streaming backwards] in
# torch's engine). Part of _engine.pyx, included in place.
#
# A node's backward runs on the stream its forward op ran on: core records
# the current stream in each output's InputMetadata (`stream`, ABI 1.4),
# and the engine makes the node's first input's stream current while the
# node runs. A gradient made on one stream and consumed on another needs an
# ordering the GPU respects without the host waiting: the engine records
# an event on the producer's stream and makes the consumer's stream wait for
# it, and sums gradients meeting in one input buffer on the consumer's
# stream. At the end of backward the caller's current stream waits for the
# streams the leaves' gradients were accumulated (or captured) on, so that
# `.grad` is safe to use on it without a synchronize.
#
# CPU nodes pay one test: metadata that is not CuPy's has no stream. The
# engine reads `stream` as core's public attribute, so it still runs on a
# core older than 1.4 (which records none: no stream handling, as before).

cdef inline object _meta_stream(InputMetadata m):
    if m is None or not m.is_cupy:
        return None
    return getattr(m, "stream", None)


cdef inline object _node_stream(Node node):
    # torch's Node::stream(): where the node's backward runs
    return _meta_stream(node._meta0)


cdef inline object _input_stream(Node node, int nr):
    # the stream of the node input `nr` (where gradients for it are consumed)
    if node._num_inputs <= nr:
        return None
    return _meta_stream(node.metadata_of(nr))


cdef inline bint _same_stream(object a, object b):
    return a is b or (a.ptr == b.ptr and a.device_id == b.device_id)


cdef int _wait_for(object consumer, object producer) except -1:
    # The consumer's stream waits for work queued so far on the producer's
    # (an event, not a host synchronize).
    if producer is None or consumer is None or _same_stream(producer, consumer):
        return 0
    consumer.wait_event(producer.record())
    return 0


cdef list _run_on_stream(GraphTask gt, Node node, list inputs, object stream):
    # the node's backward with its stream (and the stream's device) current
    # on this thread: CuPy keeps a current stream per device, and a worker
    # thread's current device is not necessarily the stream's
    import cupy
    with cupy.cuda.Device(stream.device_id):
        with stream:
            return _run_node(gt, node, inputs)


cdef int _note_leaf_stream(GraphTask gt, object stream) except -1:
    # a stream the caller must wait for at the end (leaf gradients, captures)
    if stream is None:
        return 0
    if gt.leaf_streams is None:
        gt.leaf_streams = []
    for s in gt.leaf_streams:
        if _same_stream(s, stream):
            return 0
    gt.leaf_streams.append(stream)
    return 0


cdef int _sync_caller_streams(GraphTask gt) except -1:
    # torch's GraphTask::exec_post_processing: on the calling thread, each
    # device's current stream waits for the leaf streams of that device.
    # (Called before the final callbacks, which may read any .grad.)
    import cupy
    for leaf in gt.leaf_streams:
        current = cupy.cuda.get_current_stream(leaf.device_id)
        _wait_for(current, leaf)
    gt.leaf_streams = None
    return 0
