"""h5edit.py LIBHDF5 FILE set DATASET VALUE INDEX... | FILE unlink DATASET
                 | FILE setattr DATASET NAME VALUE | FILE unattr NAME
                 | FILE gettext NAME | FILE settext NAME TEXTFILE

Damages an HDF5 file for the robustness suite through libhdf5 itself (python3's ctypes:
nothing to install): `set` writes VALUE (a float: nan, inf, 3e38 ...) at one element of
DATASET, its INDEX one number per dimension; `unlink` removes DATASET; `setattr` writes
VALUE (a float; several, comma-separated, as a 1-D attribute: nan,nan,nan) as the double
attribute NAME of DATASET ("/": of the file's root), replacing one there; `unattr` removes the root attribute NAME (given as DATASET); `gettext`
prints the fixed-length string root attribute NAME as it is, and `settext` replaces it with
the bytes of TEXTFILE (both as rtm3d writes its text attributes)."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
hid = ctypes.c_int64
for name in ("H5Fopen", "H5Dopen2", "H5Dget_space", "H5Screate_simple", "H5Screate",
             "H5Acreate2", "H5Aopen", "H5Aget_type", "H5Tcopy"):
    getattr(lib, name).restype = hid
lib.H5open()
H5F_ACC_RDWR, H5P_DEFAULT, H5S_SELECT_SET = 1, hid(0), 0
path, action, dataset = sys.argv[2].encode(), sys.argv[3], sys.argv[4].encode()
f = lib.H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)
assert f >= 0, "cannot open the file"
if action == "gettext":
    a = lib.H5Aopen(hid(f), dataset, H5P_DEFAULT)
    assert a >= 0, "no such root attribute"
    t = lib.H5Aget_type(hid(a))
    size = lib.H5Tget_size(hid(t))
    text = ctypes.create_string_buffer(size + 1)
    assert lib.H5Aread(hid(a), hid(t), text) >= 0
    sys.stdout.buffer.write(text.value)
    lib.H5Tclose(hid(t))
    lib.H5Aclose(hid(a))
elif action == "settext":
    text = open(sys.argv[5], "rb").read()
    if lib.H5Aexists(hid(f), dataset) > 0:
        assert lib.H5Adelete(hid(f), dataset) >= 0
    t = lib.H5Tcopy(hid.in_dll(lib, "H5T_C_S1_g"))
    lib.H5Tset_size.argtypes = [hid, ctypes.c_size_t]
    assert lib.H5Tset_size(hid(t), len(text)) >= 0
    scalar = lib.H5Screate(0)
    a = lib.H5Acreate2(hid(f), dataset, hid(t), hid(scalar), H5P_DEFAULT, H5P_DEFAULT)
    assert a >= 0, "cannot create the attribute"
    assert lib.H5Awrite(hid(a), hid(t), text) >= 0
    lib.H5Aclose(hid(a))
    lib.H5Sclose(hid(scalar))
    lib.H5Tclose(hid(t))
elif action == "unlink":
    assert lib.H5Ldelete(hid(f), dataset, H5P_DEFAULT) >= 0
elif action == "unattr":
    assert lib.H5Adelete(hid(f), dataset) >= 0, "no such root attribute"
elif action == "setattr":
    name = sys.argv[5].encode()
    values = [float(v) for v in sys.argv[6].split(",")]
    value = (ctypes.c_double * len(values))(*values)
    d = f if dataset == b"/" else lib.H5Dopen2(hid(f), dataset, H5P_DEFAULT)
    assert d >= 0, "no such dataset"
    if lib.H5Aexists(hid(d), name) > 0:
        assert lib.H5Adelete(hid(d), name) >= 0
    H5S_SCALAR = 0
    count = (ctypes.c_ulonglong * 1)(len(values))
    scalar = lib.H5Screate(H5S_SCALAR) if len(values) == 1 else lib.H5Screate_simple(1, count, None)
    native_double = hid.in_dll(lib, "H5T_NATIVE_DOUBLE_g")
    a = lib.H5Acreate2(hid(d), name, native_double, hid(scalar), H5P_DEFAULT, H5P_DEFAULT)
    assert a >= 0, "cannot create the attribute"
    assert lib.H5Awrite(hid(a), native_double, value) >= 0
    lib.H5Aclose(hid(a))
    lib.H5Sclose(hid(scalar))
    if d != f:
        lib.H5Dclose(hid(d))
else:
    value = ctypes.c_float(float(sys.argv[5]))
    index = [int(i) for i in sys.argv[6:]]
    d = lib.H5Dopen2(hid(f), dataset, H5P_DEFAULT)
    assert d >= 0, "no such dataset"
    space = lib.H5Dget_space(hid(d))
    assert lib.H5Sget_simple_extent_ndims(hid(space)) == len(index), "one index a dimension"
    start = (ctypes.c_ulonglong * len(index))(*index)
    one = (ctypes.c_ulonglong * len(index))(*([1] * len(index)))
    assert lib.H5Sselect_hyperslab(hid(space), H5S_SELECT_SET, start, None, one, None) >= 0
    memory = lib.H5Screate_simple(1, one, None)
    native_float = hid.in_dll(lib, "H5T_NATIVE_FLOAT_g")
    assert lib.H5Dwrite(hid(d), native_float, hid(memory), hid(space), H5P_DEFAULT,
                        ctypes.byref(value)) >= 0
    lib.H5Sclose(hid(memory))
    lib.H5Sclose(hid(space))
    lib.H5Dclose(hid(d))
assert lib.H5Fclose(hid(f)) >= 0
