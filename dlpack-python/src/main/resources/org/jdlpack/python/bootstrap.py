# The Python half of the dlpack-python bridge, run once by Interpreter.java in a module of its own,
# _jdlpack, so that nothing here shows in __main__. _jdlpack_dlpack is not defined here:
# JavaTensors.java puts it into the module (as an FFM upcall) before this runs.
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

_NOT_COPIED = ('a JavaTensor stands for a Java tensor and cannot be %s: pass the object itself; '
               'np.from_dlpack(x) shares its memory, np.from_dlpack(x).copy() copies it')

class JavaTensor:
    '''A Java tensor: np.from_dlpack(x) and torch.from_dlpack(x) take it without copying.'''
    __slots__ = ('_jdlpack_registration', '_jdlpack_device', '__weakref__')

    def __setattr__(self, name, value):
        raise AttributeError('JavaTensor attributes are read-only')

    def __delattr__(self, name):
        raise AttributeError('JavaTensor attributes are read-only')

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
        return _jdlpack_dlpack(self._jdlpack_registration, versioned, stream, -1 if copy is None else int(copy))

    # A copy would either share the Java tensor's memory (not what copy means) or need Java to
    # allocate; pickling cannot carry Java memory to another process. Both are refused.
    def __copy__(self):
        raise TypeError(_NOT_COPIED % 'copied')

    def __deepcopy__(self, memo):
        raise TypeError(_NOT_COPIED % 'copied')

    def __reduce_ex__(self, protocol):
        raise TypeError(_NOT_COPIED % 'pickled')

    def __repr__(self):
        return 'JavaTensor(device=%r)' % (self._jdlpack_device,)

def _java_tensor(registration, device_type, device_id, _new=object.__new__, _cls=JavaTensor,
                 _set_registration=JavaTensor._jdlpack_registration.__set__, _set_device=JavaTensor._jdlpack_device.__set__):
    # The one way to make a JavaTensor (the class takes no arguments, and its attributes are
    # read-only): registration is a 'jdlpack.tensor' capsule made by Java. While it lives, Java keeps
    # the tensor's DLPackSource; its destructor unregisters it. No function takes an id, so only
    # code holding the object can reach its registration. (A factory, not __init__: calling a class
    # with a Python __new__ or __init__ costs twice as much.)
    self = _new(_cls)
    _set_registration(self, registration)
    _set_device(self, (device_type, device_id))
    return self
