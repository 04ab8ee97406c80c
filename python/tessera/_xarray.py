"""xarray in and out of tessera.run and tessera.reference, when xarray is
installed: a Dataset's variables (or a DataArray) become the fields, in the
operator's axis order where their dimensions carry its extent names, and the
result goes back in the caller's dimension order with coordinates and
attributes kept."""
try:
    import xarray
except ImportError:   # optional: without it only NumPy arrays and dicts are taken
    xarray = None


def is_xarray(obj):
    return xarray is not None and isinstance(obj, (xarray.Dataset, xarray.DataArray))


def variables(obj):
    """name -> DataArray of a Dataset, or {name: DataArray} (name None when unnamed)."""
    if isinstance(obj, xarray.Dataset):
        return dict(obj.data_vars)
    return {obj.name: obj}


def in_axis_order(da, axis_names):
    """The values of da with its dimensions in the operator's order, when
    they all carry its extent names (("x", "y", "z") becomes z, y, x);
    otherwise as they are."""
    order = [n for n in axis_names if n in da.dims]
    if len(order) == da.ndim:
        da = da.transpose(*order)
    return da.values


def rewrap(obj, results, axis_names):
    """obj with the fields in results (name -> array in the operator's
    order) replaced, as the same kind of object."""
    def replaced(da, values):
        order = [n for n in axis_names if n in da.dims]
        if len(order) == da.ndim:
            return da.transpose(*order).copy(data=values).transpose(*da.dims)
        return da.copy(data=values)

    if isinstance(obj, xarray.DataArray):
        (values,) = results.values()
        return replaced(obj, values)
    out = obj.copy()
    for name, values in results.items():
        out[name] = replaced(obj[name], values)
    return out
