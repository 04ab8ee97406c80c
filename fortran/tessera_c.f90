! tessera_c.f90 - the C API of tessera.h as it is, through iso_c_binding:
! the structs it passes (bind(C) types of the same layout) and one interface
! per function. The module `tessera` (tessera.f90) builds the Fortran API on
! it; use this one directly only for what that does not wrap.
!
! The types mirror tessera.h field by field; tests/bindings checks their
! sizes against the C compiler's, so a change of tessera.h that is not made
! here too fails a test.
module tessera_c
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! tess_status
  enum, bind(c)
    enumerator :: TESS_OK = 0, TESS_ERR_ARG, TESS_ERR_NOMEM, TESS_ERR_IO, TESS_ERR_DB, &
                  TESS_ERR_FORMAT, TESS_ERR_NOTFOUND, TESS_ERR_UNAVAILABLE, TESS_ERR_COMPILE, &
                  TESS_ERR_RUNTIME, TESS_ERR_VERIFY, TESS_ERR_INTERNAL
  end enum
  ! Buffer roles of tess_buffer_info
  enum, bind(c)
    enumerator :: TESS_BUFFER_INPUT = 0, TESS_BUFFER_OUTPUT, TESS_BUFFER_SCRATCH, TESS_BUFFER_INOUT
  end enum
  integer, parameter :: TESS_EXTENT_NAME_MAX = 16

  public :: TESS_OK, TESS_ERR_ARG, TESS_ERR_NOMEM, TESS_ERR_IO, TESS_ERR_DB, TESS_ERR_FORMAT, &
            TESS_ERR_NOTFOUND, TESS_ERR_UNAVAILABLE, TESS_ERR_COMPILE, TESS_ERR_RUNTIME, &
            TESS_ERR_VERIFY, TESS_ERR_INTERNAL
  public :: TESS_BUFFER_INPUT, TESS_BUFFER_OUTPUT, TESS_BUFFER_SCRATCH, TESS_BUFFER_INOUT
  public :: TESS_EXTENT_NAME_MAX

  type, bind(c), public :: c_tune_options
    type(c_ptr) :: strategy
    integer(c_int) :: budget
    real(c_double) :: seconds
    integer(c_int64_t) :: seed          ! uint64_t
    integer(c_int) :: batch
    integer(c_int) :: window
    type(c_ptr) :: transfer
    integer(c_int) :: full_timing
    type(c_ptr) :: fix
    real(c_double) :: compile_timeout_s
    real(c_double) :: error_budget
    type(c_funptr) :: progress
    type(c_ptr) :: progress_user
    type(c_ptr) :: cancel               ! const volatile sig_atomic_t *
  end type

  type, bind(c), public :: c_tune_report
    character(kind=c_char) :: best_config(512)
    real(c_double) :: best_ms, best_gbps, best_gflops
    real(c_double) :: default_ms
    real(c_double) :: ceiling_gbps, ceiling_gflops
    character(kind=c_char) :: bound(32)
    real(c_double) :: bound_ms
    real(c_double) :: fraction_of_ceiling
    integer(c_int) :: evaluations
    real(c_double) :: elapsed_s
    integer(c_int) :: status_counts(6)
    character(kind=c_char) :: stop_reason(96)
    character(kind=c_char) :: device(320)
    integer(c_int) :: warm_configs
    character(kind=c_char) :: transfer_from(1024)
    real(c_double) :: best_spread, default_spread
    real(c_double) :: working_set_bytes, cache_bytes
    real(c_double) :: best_error
    character(kind=c_char) :: best_exact_config(512)
    real(c_double) :: best_exact_ms, best_exact_error
  end type

  type, bind(c), public :: c_dispatch_options
    integer(c_int) :: online_budget
    real(c_double) :: online_seconds
    integer(c_int) :: verify
  end type

  type, bind(c), public :: c_buffer_info
    character(kind=c_char) :: name(24)
    integer(c_int) :: role
    character(kind=c_char) :: dtype(8)
    integer(c_size_t) :: elem_bytes
    integer(c_int64_t) :: count
    integer(c_int) :: rank
    integer(c_int) :: advances
    integer(c_int) :: advanced
    real(c_double) :: lo, hi
  end type

  public :: c_tess_errmsg, c_tess_status_name, c_tess_open, c_tess_open_readonly, c_tess_close
  public :: c_tess_tune_options_default, c_tess_tune, c_tess_dispatch_options_default
  public :: c_tess_kernel_get, c_tess_dispatch, c_tess_kernel_config, c_tess_kernel_origin
  public :: c_tess_kernel_note, c_tess_kernel_run, c_tess_kernel_run_on_stream, c_tess_kernel_destroy
  public :: c_tess_kernel_set_scalar, c_tess_kernel_set_extent
  public :: c_tess_kernel_alloc, c_tess_kernel_free, c_tess_kernel_upload, c_tess_kernel_download
  public :: c_tess_op_check, c_tess_op_list_buffers, c_tess_op_counts, c_strlen

  interface
    function c_tess_errmsg() bind(c, name='tess_errmsg')
      import :: c_ptr
      type(c_ptr) :: c_tess_errmsg
    end function

    function c_tess_status_name(st) bind(c, name='tess_status_name')
      import :: c_ptr, c_int
      integer(c_int), value :: st
      type(c_ptr) :: c_tess_status_name
    end function

    function c_tess_open(ctx, db_path) bind(c, name='tess_open')
      import :: c_ptr, c_int
      type(c_ptr), intent(out) :: ctx
      type(c_ptr), value :: db_path
      integer(c_int) :: c_tess_open
    end function

    function c_tess_open_readonly(ctx, db_path) bind(c, name='tess_open_readonly')
      import :: c_ptr, c_int
      type(c_ptr), intent(out) :: ctx
      type(c_ptr), value :: db_path
      integer(c_int) :: c_tess_open_readonly
    end function

    subroutine c_tess_close(ctx) bind(c, name='tess_close')
      import :: c_ptr
      type(c_ptr), value :: ctx
    end subroutine

    function c_tess_tune_options_default() bind(c, name='tess_tune_options_default')
      import :: c_tune_options
      type(c_tune_options) :: c_tess_tune_options_default
    end function

    function c_tess_tune(ctx, op, shape, ndim, dtype, backend, opt, report) bind(c, name='tess_tune')
      import :: c_ptr, c_int, c_char, c_int64_t, c_tune_options, c_tune_report
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: op(*), dtype(*)
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int), value :: ndim
      type(c_ptr), value :: backend
      type(c_tune_options), intent(in) :: opt
      type(c_tune_report), intent(out) :: report
      integer(c_int) :: c_tess_tune
    end function

    function c_tess_dispatch_options_default() bind(c, name='tess_dispatch_options_default')
      import :: c_dispatch_options
      type(c_dispatch_options) :: c_tess_dispatch_options_default
    end function

    function c_tess_kernel_get(ctx, op, shape, ndim, dtype, backend, k) bind(c, name='tess_kernel_get')
      import :: c_ptr, c_int, c_char, c_int64_t
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: op(*), dtype(*)
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int), value :: ndim
      type(c_ptr), value :: backend
      type(c_ptr), intent(out) :: k
      integer(c_int) :: c_tess_kernel_get
    end function

    function c_tess_dispatch(ctx, op, shape, ndim, dtype, backend, opt, k) bind(c, name='tess_dispatch')
      import :: c_ptr, c_int, c_char, c_int64_t, c_dispatch_options
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: op(*), dtype(*)
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int), value :: ndim
      type(c_ptr), value :: backend
      type(c_dispatch_options), intent(in) :: opt
      type(c_ptr), intent(out) :: k
      integer(c_int) :: c_tess_dispatch
    end function

    function c_tess_kernel_config(k) bind(c, name='tess_kernel_config')
      import :: c_ptr
      type(c_ptr), value :: k
      type(c_ptr) :: c_tess_kernel_config
    end function

    function c_tess_kernel_origin(k) bind(c, name='tess_kernel_origin')
      import :: c_ptr
      type(c_ptr), value :: k
      type(c_ptr) :: c_tess_kernel_origin
    end function

    function c_tess_kernel_note(k) bind(c, name='tess_kernel_note')
      import :: c_ptr
      type(c_ptr), value :: k
      type(c_ptr) :: c_tess_kernel_note
    end function

    function c_tess_kernel_run(k, arrays, narrays) bind(c, name='tess_kernel_run')
      import :: c_ptr, c_int
      type(c_ptr), value :: k
      type(c_ptr), intent(in) :: arrays(*)
      integer(c_int), value :: narrays
      integer(c_int) :: c_tess_kernel_run
    end function

    function c_tess_kernel_run_on_stream(k, arrays, narrays, stream) bind(c, name='tess_kernel_run_on_stream')
      import :: c_ptr, c_int
      type(c_ptr), value :: k
      type(c_ptr), intent(in) :: arrays(*)
      integer(c_int), value :: narrays
      type(c_ptr), value :: stream
      integer(c_int) :: c_tess_kernel_run_on_stream
    end function

    subroutine c_tess_kernel_destroy(k) bind(c, name='tess_kernel_destroy')
      import :: c_ptr
      type(c_ptr), value :: k
    end subroutine

    function c_tess_kernel_set_scalar(k, name, value) bind(c, name='tess_kernel_set_scalar')
      import :: c_ptr, c_int, c_char, c_double
      type(c_ptr), value :: k
      character(kind=c_char), intent(in) :: name(*)
      real(c_double), value :: value
      integer(c_int) :: c_tess_kernel_set_scalar
    end function

    function c_tess_kernel_set_extent(k, name, value) bind(c, name='tess_kernel_set_extent')
      import :: c_ptr, c_int, c_char, c_int64_t
      type(c_ptr), value :: k
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), value :: value
      integer(c_int) :: c_tess_kernel_set_extent
    end function

    function c_tess_kernel_alloc(k, bytes, ptr) bind(c, name='tess_kernel_alloc')
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: k
      integer(c_size_t), value :: bytes
      type(c_ptr), intent(out) :: ptr
      integer(c_int) :: c_tess_kernel_alloc
    end function

    subroutine c_tess_kernel_free(k, ptr) bind(c, name='tess_kernel_free')
      import :: c_ptr
      type(c_ptr), value :: k, ptr
    end subroutine

    function c_tess_kernel_upload(k, dst, host, bytes) bind(c, name='tess_kernel_upload')
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: k, dst, host
      integer(c_size_t), value :: bytes
      integer(c_int) :: c_tess_kernel_upload
    end function

    function c_tess_kernel_download(k, host, src, bytes) bind(c, name='tess_kernel_download')
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: k, host, src
      integer(c_size_t), value :: bytes
      integer(c_int) :: c_tess_kernel_download
    end function

    function c_tess_op_check(name) bind(c, name='tess_op_check')
      import :: c_ptr, c_int
      type(c_ptr), value :: name
      integer(c_int) :: c_tess_op_check
    end function

    function c_tess_op_list_buffers(op, shape, ndim, dtype, out, cap, n) bind(c, name='tess_op_list_buffers')
      import :: c_int, c_char, c_int64_t, c_buffer_info
      character(kind=c_char), intent(in) :: op(*), dtype(*)
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int), value :: ndim
      type(c_buffer_info), intent(out) :: out(*)
      integer(c_int), value :: cap
      integer(c_int), intent(out) :: n
      integer(c_int) :: c_tess_op_list_buffers
    end function

    function c_tess_op_counts(op, shape, ndim, dtype, bytes, flops, tolerance) bind(c, name='tess_op_counts')
      import :: c_int, c_char, c_int64_t, c_double
      character(kind=c_char), intent(in) :: op(*), dtype(*)
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int), value :: ndim
      real(c_double), intent(out) :: bytes, flops, tolerance
      integer(c_int) :: c_tess_op_counts
    end function

    function c_strlen(s) bind(c, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
  end interface
end module tessera_c
