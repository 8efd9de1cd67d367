# The Python half of the dlpack-python bridge, run once by Interpreter.java in a module of its own,
# _jdlpack, so that nothing here shows in __main__. _jdlpack_dlpack and _jdlpack_release are not
# defined here: JavaTensors.java puts them into the module (as FFM upcalls) before this runs.
import sys, traceback

_main = sys.modules['__main__'].__dict__

def _guard(f, *args):
    # Every call from Java comes through here, so that Java sees (ok, value) or
    # (False, traceback) and never a pending exception.
    try:
        return (True, f(*args))
    except BaseException:
        return (False, traceback.format_exc())

def _exec(src):
    exec(src, _main)

def _eval(src):
    return eval(src, _main)

def _get(name):
    return _main[name]

def _set(name, value):
    _main[name] = value

def _capsule_of(obj):
    if type(obj).__name__ == 'PyCapsule':
        return obj
    if getattr(type(obj), '__dlpack__', None) is None:
        raise TypeError(type(obj).__module__ + '.' + type(obj).__qualname__ + ' has no __dlpack__')
    try:
        return obj.__dlpack__(max_version=(1, 3))
    except TypeError:
        # A producer older than DLPack 1.0 does not take max_version: the array API's fallback.
        return obj.__dlpack__()

class JavaTensor:
    '''A Java tensor: np.from_dlpack(x) and torch.from_dlpack(x) take it without copying.'''
    __slots__ = ('_jdlpack_id', '_jdlpack_device', '__weakref__')

    def __init__(self, ident, device_type, device_id):
        self._jdlpack_id = ident
        self._jdlpack_device = (device_type, device_id)

    def __dlpack_device__(self):
        return self._jdlpack_device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and (int(dl_device[0]), int(dl_device[1])) != self._jdlpack_device:
            raise BufferError('this Java tensor lives on device %r and cannot be exported to %r'
                              % (self._jdlpack_device, tuple(dl_device)))
        if copy is not None and not isinstance(copy, bool):
            raise TypeError('copy must be None, True or False, not %r' % (copy,))
        versioned = max_version is not None and int(max_version[0]) >= 1
        if stream is not None:
            stream = int(stream)
        return _jdlpack_dlpack(self._jdlpack_id, versioned, stream, -1 if copy is None else int(copy))

    # The default argument keeps the release function reachable while the module is torn down.
    def __del__(self, _release=_jdlpack_release):
        _release(self._jdlpack_id)

    def __repr__(self):
        return 'JavaTensor(device=%r)' % (self._jdlpack_device,)
