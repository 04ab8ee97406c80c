! tessera.f90 - the Fortran API of tessera: open the records, tune a task,
! get or dispatch its kernel and run it on Fortran arrays or device memory.
!
! Conventions:
! - Every procedure that can fail takes an optional `stat`: TESS_OK (0) on
!   success, else the tess_status, with the message in tess_errmsg(). Without
!   `stat` a failure stops the program with that message (error stop).
! - Extents are given as Fortran declares arrays, fastest first: a field
!   u(nx, ny, nz) is the task of extents [nx, ny, nz], so `shape(u)` can be
!   passed. tessera names extents slowest first (z, y, x: the task key
!   hdiff:f32:NZxNYxNX); the arrays coincide in memory, since the first index
!   of a Fortran array varies fastest, as the last one of a C array does.
! - A run takes its arrays in the operator's buffer order (`tessera ops`,
!   tess_op_buffers), each wrapped by tess_array(x): contiguous arrays of
!   any rank and lower bounds, real(real32) for f32 buffers, real(real64)
!   for f64, integer(int16) holding the bits of bf16 and f16. Declare them
!   `target` (tess_array takes their address). Device memory (the cuda
!   backend) is passed as tess_device_array(ptr).
module tessera
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int16, int32, int64, real32, real64
  use tessera_c
  implicit none
  private

  public :: TESS_OK, TESS_ERR_ARG, TESS_ERR_NOMEM, TESS_ERR_IO, TESS_ERR_DB, TESS_ERR_FORMAT, &
            TESS_ERR_NOTFOUND, TESS_ERR_UNAVAILABLE, TESS_ERR_COMPILE, TESS_ERR_RUNTIME, &
            TESS_ERR_VERIFY, TESS_ERR_INTERNAL
  public :: TESS_BUFFER_INPUT, TESS_BUFFER_OUTPUT, TESS_BUFFER_SCRATCH, TESS_BUFFER_INOUT
  public :: tess_context, tess_kernel, tess_buffer, tess_array_ref, tess_tune_report
  public :: tess_errmsg, tess_status_name, tess_open, tess_close, tess_tune
  public :: tess_kernel_get, tess_dispatch, tess_kernel_run, tess_kernel_destroy
  public :: tess_kernel_config, tess_kernel_origin, tess_kernel_note
  public :: tess_kernel_set_scalar, tess_kernel_set_extent
  public :: tess_array, tess_device_array
  public :: tess_kernel_alloc, tess_kernel_free, tess_kernel_upload, tess_kernel_download
  public :: tess_op_check, tess_op_buffers, tess_op_counts

  type :: tess_context
    type(c_ptr) :: ptr = c_null_ptr
  end type

  ! One buffer of a task's kernel (tess_buffer_info of tessera.h).
  type :: tess_buffer
    character(len=23) :: name = ''
    integer :: role = TESS_BUFFER_INPUT   ! TESS_BUFFER_INPUT, _OUTPUT, _SCRATCH, _INOUT
    character(len=7) :: dtype = ''        ! "f32", "f64", "bf16", "f16"
    integer :: elem_bytes = 0
    integer(int64) :: count = 0           ! elements
    integer :: rank = 0                   ! it spans the task's `rank` fastest extents
    integer(int64) :: extents(8) = 0      ! those extents, fastest first
    integer :: advances = 0               ! an output: the index of the input it advances, else 0
    logical :: advanced = .false.         ! an input that an output advances (state)
    real(real64) :: lo = 0, hi = 0        ! an input: the range of the operator's test values
  end type

  type :: tess_kernel
    type(c_ptr) :: ptr = c_null_ptr
    logical :: owned = .false.            ! tess_kernel_get's; tess_dispatch's belong to the context
    character(len=:), allocatable :: task ! "hdiff f32 [64,48,4]", for messages
    type(tess_buffer), allocatable :: buffers(:)
  end type

  ! One array of a run, made by tess_array or tess_device_array.
  type :: tess_array_ref
    type(c_ptr) :: ptr = c_null_ptr
    character(len=14) :: fortran_type = ''  ! "real(real32)", ...; "" for device memory (not checked)
    integer :: elem_bytes = 0
    integer :: rank = 0
    integer(int64) :: extents(15) = 0
    logical :: contiguous = .true.
  end type

  ! What tess_tune found (tess_tune_report of tessera.h).
  type :: tess_tune_report
    character(len=512) :: best_config = ''
    real(real64) :: best_ms = 0, best_gbps = 0, best_gflops = 0
    real(real64) :: default_ms = 0        ! the template's default config, measured in the same run
    real(real64) :: ceiling_gbps = 0, ceiling_gflops = 0
    character(len=32) :: bound = ''       ! the ceiling that bounds the task
    real(real64) :: bound_ms = 0, fraction_of_ceiling = 0
    integer :: evaluations = 0
    real(real64) :: elapsed_s = 0
    ! ok, compile_error, runtime_error, wrong_result, timeout, invalid
    integer :: status_counts(6) = 0
    character(len=96) :: stop_reason = ''
    character(len=320) :: device = ''
    integer :: warm_configs = 0
    character(len=1024) :: transfer_from = ''
    ! How far to trust the times: the interquartile spreads of the best and
    ! the default over their medians, and the bytes a run moves beside the
    ! last-level cache (a working set that fits is timed from the cache).
    real(real64) :: best_spread = 0, default_spread = 0
    real(real64) :: working_set_bytes = 0, cache_bytes = 0
    ! The largest error the best config's verification saw (-1: unknown),
    ! and the best config that takes no shortcut, its time and error.
    real(real64) :: best_error = -1
    character(len=512) :: best_exact_config = ''
    real(real64) :: best_exact_ms = 0, best_exact_error = -1
  end type

  interface tess_array
    module procedure array_real32, array_real64, array_int16
  end interface
  interface tess_kernel_set_extent
    module procedure set_extent_int32, set_extent_int64
  end interface

  ! The message of the last failure found by this module rather than by the
  ! library (an array that does not fit its buffer); unset when the library's
  ! message is the last one.
  character(len=:), allocatable, save :: binding_message

contains

  ! ---- errors ----------------------------------------------------------------

  function tess_errmsg() result(msg)
    character(len=:), allocatable :: msg
    if (allocated(binding_message)) then
      msg = binding_message
    else
      msg = f_string(c_tess_errmsg())
    end if
  end function

  function tess_status_name(st) result(name)
    integer, intent(in) :: st
    character(len=:), allocatable :: name
    name = f_string(c_tess_status_name(int(st, c_int)))
  end function

  ! The end of every call: stat gets st; without stat, a failure stops.
  subroutine finish(st, where, stat)
    integer(c_int), intent(in) :: st
    character(len=*), intent(in) :: where
    integer, intent(out), optional :: stat
    if (st /= TESS_OK .and. allocated(binding_message)) deallocate (binding_message)
    call conclude(st, where, stat)
  end subroutine

  ! A failure found here, with its own message.
  subroutine fail(st, where, msg, stat)
    integer(c_int), intent(in) :: st
    character(len=*), intent(in) :: where, msg
    integer, intent(out), optional :: stat
    binding_message = where // ': ' // msg
    call conclude(st, where, stat)
  end subroutine

  subroutine conclude(st, where, stat)
    integer(c_int), intent(in) :: st
    character(len=*), intent(in) :: where
    integer, intent(out), optional :: stat
    character(len=:), allocatable :: msg
    if (present(stat)) then
      stat = int(st)
    else if (st /= TESS_OK) then
      msg = 'tessera: ' // where // ': ' // f_string(c_tess_errmsg())
      if (allocated(binding_message)) msg = 'tessera: ' // binding_message
      error stop msg
    end if
  end subroutine

  ! ---- contexts ----------------------------------------------------------------

  ! Opens the records database at db (absent: $TESSERA_DB, else
  ! $XDG_DATA_HOME/tessera/records.db), creating it when missing; with
  ! readonly=.true. an existing one for reading only, creating nothing
  ! (kernels and dispatch work, tuning fails).
  subroutine tess_open(ctx, db, readonly, stat)
    type(tess_context), intent(out) :: ctx
    character(len=*), intent(in), optional :: db
    logical, intent(in), optional :: readonly
    integer, intent(out), optional :: stat
    character(kind=c_char), allocatable, target :: c_db(:)
    type(c_ptr) :: path
    character(len=:), allocatable :: where
    integer(c_int) :: st
    path = c_null_ptr
    where = 'tess_open'
    if (present(db)) then
      call c_string_to(db, c_db)
      path = c_loc(c_db)
      where = 'tess_open(' // db // ')'
    end if
    if (present(readonly)) then
      if (readonly) then
        call finish(c_tess_open_readonly(ctx%ptr, path), where, stat)
        return
      end if
    end if
    st = c_tess_open(ctx%ptr, path)
    call finish(st, where, stat)
  end subroutine

  ! Closes the context; the kernels tess_dispatch returned go with it.
  subroutine tess_close(ctx)
    type(tess_context), intent(inout) :: ctx
    if (c_associated(ctx%ptr)) call c_tess_close(ctx%ptr)
    ctx%ptr = c_null_ptr
  end subroutine

  ! ---- tuning ------------------------------------------------------------------

  ! Tunes op on the extents (fastest first) and dtype ("f32", ...) on a
  ! backend ("cpu", "cuda"; "": the best present); every result goes to the
  ! records as it arrives. The optional arguments are tess_tune_options'.
  subroutine tess_tune(ctx, op, extents, dtype, backend, budget, seconds, strategy, seed, batch, window, &
                       transfer, fix, full_timing, compile_timeout, error_budget, report, stat)
    type(tess_context), intent(in) :: ctx
    character(len=*), intent(in) :: op, dtype, backend
    integer, intent(in) :: extents(:)
    integer, intent(in), optional :: budget, batch, window
    real(real64), intent(in), optional :: seconds, compile_timeout, error_budget
    character(len=*), intent(in), optional :: strategy, transfer, fix
    integer(int64), intent(in), optional :: seed
    logical, intent(in), optional :: full_timing
    type(tess_tune_report), intent(out), optional :: report
    integer, intent(out), optional :: stat
    type(c_tune_options) :: opt
    type(c_tune_report) :: c_report
    character(kind=c_char), allocatable, target :: c_backend(:), c_strategy(:), c_transfer(:), c_fix(:)
    integer(c_int) :: st

    opt = c_tess_tune_options_default()
    if (present(budget)) opt%budget = int(budget, c_int)
    if (present(seconds)) opt%seconds = seconds
    if (present(seed)) opt%seed = seed
    if (present(batch)) opt%batch = int(batch, c_int)
    if (present(window)) opt%window = int(window, c_int)
    if (present(full_timing)) opt%full_timing = merge(1_c_int, 0_c_int, full_timing)
    if (present(compile_timeout)) opt%compile_timeout_s = compile_timeout
    if (present(error_budget)) opt%error_budget = error_budget
    if (present(strategy)) then
      call c_string_to(strategy, c_strategy)
      opt%strategy = c_loc(c_strategy)
    end if
    if (present(transfer)) then
      call c_string_to(transfer, c_transfer)
      opt%transfer = c_loc(c_transfer)
    end if
    if (present(fix)) then
      call c_string_to(fix, c_fix)
      opt%fix = c_loc(c_fix)
    end if
    call c_string_to(backend, c_backend)
    st = c_tess_tune(ctx%ptr, c_string(op), c_shape(extents), size(extents, kind=c_int), c_string(dtype), &
                     nullable(c_backend), opt, c_report)
    if (st == TESS_OK .and. present(report)) report = report_of(c_report)
    call finish(st, 'tess_tune(' // task_text(op, extents, dtype) // ')', stat)
  end subroutine

  function report_of(c) result(r)
    type(c_tune_report), intent(in) :: c
    type(tess_tune_report) :: r
    r%best_config = chars_string(c%best_config)
    r%best_ms = c%best_ms
    r%best_gbps = c%best_gbps
    r%best_gflops = c%best_gflops
    r%default_ms = c%default_ms
    r%ceiling_gbps = c%ceiling_gbps
    r%ceiling_gflops = c%ceiling_gflops
    r%bound = chars_string(c%bound)
    r%bound_ms = c%bound_ms
    r%fraction_of_ceiling = c%fraction_of_ceiling
    r%evaluations = int(c%evaluations)
    r%elapsed_s = c%elapsed_s
    r%status_counts = int(c%status_counts)
    r%stop_reason = chars_string(c%stop_reason)
    r%device = chars_string(c%device)
    r%warm_configs = int(c%warm_configs)
    r%transfer_from = chars_string(c%transfer_from)
    r%best_spread = c%best_spread
    r%default_spread = c%default_spread
    r%working_set_bytes = c%working_set_bytes
    r%cache_bytes = c%cache_bytes
    r%best_error = c%best_error
    r%best_exact_config = chars_string(c%best_exact_config)
    r%best_exact_ms = c%best_exact_ms
    r%best_exact_error = c%best_exact_error
  end function

  ! ---- kernels -----------------------------------------------------------------

  ! The kernel to run for a task: the best recorded config for this device,
  ! else the template's default. Release it with tess_kernel_destroy.
  subroutine tess_kernel_get(ctx, op, extents, dtype, backend, kernel, stat)
    type(tess_context), intent(in) :: ctx
    character(len=*), intent(in) :: op, dtype, backend
    integer, intent(in) :: extents(:)
    type(tess_kernel), intent(out) :: kernel
    integer, intent(out), optional :: stat
    character(kind=c_char), allocatable, target :: c_backend(:)
    integer(c_int) :: st
    call c_string_to(backend, c_backend)
    st = c_tess_kernel_get(ctx%ptr, c_string(op), c_shape(extents), size(extents, kind=c_int), c_string(dtype), &
                           nullable(c_backend), kernel%ptr)
    if (st == TESS_OK) st = describe(kernel, op, extents, dtype, .true.)
    call finish(st, 'tess_kernel_get(' // task_text(op, extents, dtype) // ')', stat)
  end subroutine

  ! Run-time dispatch (tess_dispatch of tessera.h): the kernel for a task,
  ! cached in the context, which owns it (tess_kernel_destroy only forgets it).
  ! online_budget, online_seconds: light tuning of a task never tuned here;
  ! verify (default .true.): check its first use in this process.
  subroutine tess_dispatch(ctx, op, extents, dtype, backend, kernel, online_budget, online_seconds, verify, stat)
    type(tess_context), intent(in) :: ctx
    character(len=*), intent(in) :: op, dtype, backend
    integer, intent(in) :: extents(:)
    type(tess_kernel), intent(out) :: kernel
    integer, intent(in), optional :: online_budget
    real(real64), intent(in), optional :: online_seconds
    logical, intent(in), optional :: verify
    integer, intent(out), optional :: stat
    type(c_dispatch_options) :: opt
    character(kind=c_char), allocatable, target :: c_backend(:)
    integer(c_int) :: st
    opt = c_tess_dispatch_options_default()
    if (present(online_budget)) opt%online_budget = int(online_budget, c_int)
    if (present(online_seconds)) opt%online_seconds = online_seconds
    if (present(verify)) opt%verify = merge(1_c_int, 0_c_int, verify)
    call c_string_to(backend, c_backend)
    st = c_tess_dispatch(ctx%ptr, c_string(op), c_shape(extents), size(extents, kind=c_int), c_string(dtype), &
                         nullable(c_backend), opt, kernel%ptr)
    if (st == TESS_OK) st = describe(kernel, op, extents, dtype, .false.)
    call finish(st, 'tess_dispatch(' // task_text(op, extents, dtype) // ')', stat)
  end subroutine

  ! Keeps what a run checks its arrays against: the task's buffers.
  function describe(kernel, op, extents, dtype, owned) result(st)
    type(tess_kernel), intent(inout) :: kernel
    character(len=*), intent(in) :: op, dtype
    integer, intent(in) :: extents(:)
    logical, intent(in) :: owned
    integer(c_int) :: st
    kernel%owned = owned
    kernel%task = task_text(op, extents, dtype)
    call tess_op_buffers(op, extents, dtype, kernel%buffers, stat=st)
  end function

  ! Releases a kernel from tess_kernel_get; one from tess_dispatch stays in
  ! its context.
  subroutine tess_kernel_destroy(kernel)
    type(tess_kernel), intent(inout) :: kernel
    if (kernel%owned .and. c_associated(kernel%ptr)) call c_tess_kernel_destroy(kernel%ptr)
    kernel%ptr = c_null_ptr
    kernel%owned = .false.
    if (allocated(kernel%buffers)) deallocate (kernel%buffers)
  end subroutine

  ! The config a kernel runs ("name=value,..."), where it came from ("exact",
  ! "transfer", "default", "fallback") and why, if it fell back.
  function tess_kernel_config(kernel) result(s)
    type(tess_kernel), intent(in) :: kernel
    character(len=:), allocatable :: s
    s = f_string(c_tess_kernel_config(kernel%ptr))
  end function

  function tess_kernel_origin(kernel) result(s)
    type(tess_kernel), intent(in) :: kernel
    character(len=:), allocatable :: s
    s = f_string(c_tess_kernel_origin(kernel%ptr))
  end function

  function tess_kernel_note(kernel) result(s)
    type(tess_kernel), intent(in) :: kernel
    character(len=:), allocatable :: s
    s = f_string(c_tess_kernel_note(kernel%ptr))
  end function

  ! Runs the kernel on arrays in buffer order. With stream (cuda: a CUstream,
  ! c_null_ptr the default stream) the launches are queued without waiting.
  subroutine tess_kernel_run(kernel, arrays, stream, stat)
    type(tess_kernel), intent(in) :: kernel
    type(tess_array_ref), intent(in) :: arrays(:)
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: stat
    type(c_ptr) :: ptrs(size(arrays))
    character(len=:), allocatable :: where, why
    integer :: i
    integer(c_int) :: st
    if (.not. allocated(kernel%buffers)) then
      call fail(TESS_ERR_ARG, 'tess_kernel_run', 'the kernel is not set: tess_kernel_get or tess_dispatch first', stat)
      return
    end if
    where = 'tess_kernel_run(' // kernel%task // ')'
    if (size(arrays) /= size(kernel%buffers)) then
      call fail(TESS_ERR_ARG, where, 'got ' // int_text(int(size(arrays), int64)) // ' arrays, the kernel takes ' // &
                buffer_names(kernel%buffers), stat)
      return
    end if
    do i = 1, size(arrays)
      why = mismatch(arrays(i), kernel%buffers(i))
      if (len(why) > 0) then
        call fail(TESS_ERR_ARG, where, 'array ' // int_text(int(i, int64)) // " ('" // trim(kernel%buffers(i)%name) // &
                  "') " // why, stat)
        return
      end if
      ptrs(i) = arrays(i)%ptr
    end do
    if (present(stream)) then
      st = c_tess_kernel_run_on_stream(kernel%ptr, ptrs, size(ptrs, kind=c_int), stream)
    else
      st = c_tess_kernel_run(kernel%ptr, ptrs, size(ptrs, kind=c_int))
    end if
    call finish(st, where, stat)
  end subroutine

  ! Why an array cannot stand for a buffer ("" if it can).
  function mismatch(a, b) result(why)
    type(tess_array_ref), intent(in) :: a
    type(tess_buffer), intent(in) :: b
    character(len=:), allocatable :: why
    character(len=:), allocatable :: want
    why = ''
    if (.not. c_associated(a%ptr)) then
      why = 'is a null pointer'
      return
    end if
    if (len_trim(a%fortran_type) == 0) return   ! device memory: nothing to check
    want = fortran_type_of(b%dtype)
    if (trim(a%fortran_type) /= want) then
      why = 'is ' // trim(a%fortran_type) // ', the buffer is ' // trim(b%dtype) // ': pass ' // want
    else if (.not. a%contiguous) then
      why = 'is not contiguous (a strided section?): pass a contiguous array or a copy'
    else if (a%rank == b%rank) then
      if (any(a%extents(1:a%rank) /= b%extents(1:b%rank))) &
        why = 'has shape ' // extents_text(a%extents(1:a%rank)) // ', the buffer ' // extents_text(b%extents(1:b%rank))
    else if (product(a%extents(1:a%rank)) /= b%count) then
      why = 'has ' // int_text(product(a%extents(1:a%rank))) // ' elements, the buffer ' // int_text(b%count) // &
            ' (shape ' // extents_text(b%extents(1:b%rank)) // ')'
    end if
  end function

  ! The Fortran type that holds a dtype's elements.
  function fortran_type_of(dtype) result(t)
    character(len=*), intent(in) :: dtype
    character(len=:), allocatable :: t
    select case (trim(dtype))
    case ('f32')
      t = 'real(real32)'
    case ('f64')
      t = 'real(real64)'
    case ('bf16', 'f16')
      t = 'integer(int16)'
    case default
      t = 'none (dtype ' // trim(dtype) // ')'
    end select
  end function

  subroutine tess_kernel_set_scalar(kernel, name, value, stat)
    type(tess_kernel), intent(in) :: kernel
    character(len=*), intent(in) :: name
    real(real64), intent(in) :: value
    integer, intent(out), optional :: stat
    call finish(c_tess_kernel_set_scalar(kernel%ptr, c_string(name), value), &
                'tess_kernel_set_scalar(' // kernel%task // ', ' // name // ')', stat)
  end subroutine

  subroutine set_extent_int64(kernel, name, value, stat)
    type(tess_kernel), intent(in) :: kernel
    character(len=*), intent(in) :: name
    integer(int64), intent(in) :: value
    integer, intent(out), optional :: stat
    call finish(c_tess_kernel_set_extent(kernel%ptr, c_string(name), int(value, c_int64_t)), &
                'tess_kernel_set_extent(' // kernel%task // ', ' // name // ')', stat)
  end subroutine

  subroutine set_extent_int32(kernel, name, value, stat)
    type(tess_kernel), intent(in) :: kernel
    character(len=*), intent(in) :: name
    integer(int32), intent(in) :: value
    integer, intent(out), optional :: stat
    call set_extent_int64(kernel, name, int(value, int64), stat)
  end subroutine

  ! ---- arrays ------------------------------------------------------------------

  function array_real32(x) result(a)
    real(real32), intent(in), target :: x(..)
    type(tess_array_ref) :: a
    a = array_ref(c_loc(x), 'real(real32)', 4, shape(x, kind=int64), is_contiguous(x))
  end function

  function array_real64(x) result(a)
    real(real64), intent(in), target :: x(..)
    type(tess_array_ref) :: a
    a = array_ref(c_loc(x), 'real(real64)', 8, shape(x, kind=int64), is_contiguous(x))
  end function

  function array_int16(x) result(a)
    integer(int16), intent(in), target :: x(..)
    type(tess_array_ref) :: a
    a = array_ref(c_loc(x), 'integer(int16)', 2, shape(x, kind=int64), is_contiguous(x))
  end function

  function array_ref(ptr, fortran_type, elem_bytes, extents, contiguous) result(a)
    type(c_ptr), intent(in) :: ptr
    character(len=*), intent(in) :: fortran_type
    integer, intent(in) :: elem_bytes
    integer(int64), intent(in) :: extents(:)
    logical, intent(in) :: contiguous
    type(tess_array_ref) :: a
    a%ptr = ptr
    a%fortran_type = fortran_type
    a%elem_bytes = elem_bytes
    a%rank = size(extents)
    a%extents(1:a%rank) = extents
    a%contiguous = contiguous
  end function

  ! Device memory (tess_kernel_alloc, or the caller's own): passed as it is.
  function tess_device_array(ptr) result(a)
    type(c_ptr), intent(in) :: ptr
    type(tess_array_ref) :: a
    a%ptr = ptr
  end function

  ! Memory in the kernel's execution context: device memory for cuda, host
  ! memory for cpu. Free it before the kernel is destroyed.
  subroutine tess_kernel_alloc(kernel, bytes, ptr, stat)
    type(tess_kernel), intent(in) :: kernel
    integer(int64), intent(in) :: bytes
    type(c_ptr), intent(out) :: ptr
    integer, intent(out), optional :: stat
    call finish(c_tess_kernel_alloc(kernel%ptr, int(bytes, c_size_t), ptr), 'tess_kernel_alloc(' // kernel%task // ')', stat)
  end subroutine

  subroutine tess_kernel_free(kernel, ptr)
    type(tess_kernel), intent(in) :: kernel
    type(c_ptr), intent(inout) :: ptr
    if (c_associated(ptr)) call c_tess_kernel_free(kernel%ptr, ptr)
    ptr = c_null_ptr
  end subroutine

  ! Copies a host array (tess_array(x)) to memory from tess_kernel_alloc.
  subroutine tess_kernel_upload(kernel, dst, host, stat)
    type(tess_kernel), intent(in) :: kernel
    type(c_ptr), intent(in) :: dst
    type(tess_array_ref), intent(in) :: host
    integer, intent(out), optional :: stat
    character(len=:), allocatable :: where
    where = 'tess_kernel_upload(' // kernel%task // ')'
    if (host_check(host, where, stat)) &
      call finish(c_tess_kernel_upload(kernel%ptr, dst, host%ptr, host_bytes(host)), where, stat)
  end subroutine

  ! Copies memory from tess_kernel_alloc to a host array (tess_array(x)).
  subroutine tess_kernel_download(kernel, host, src, stat)
    type(tess_kernel), intent(in) :: kernel
    type(tess_array_ref), intent(in) :: host
    type(c_ptr), intent(in) :: src
    integer, intent(out), optional :: stat
    character(len=:), allocatable :: where
    where = 'tess_kernel_download(' // kernel%task // ')'
    if (host_check(host, where, stat)) &
      call finish(c_tess_kernel_download(kernel%ptr, host%ptr, src, host_bytes(host)), where, stat)
  end subroutine

  ! Whether a copy can use the array as host memory; fails otherwise.
  function host_check(host, where, stat) result(ok)
    type(tess_array_ref), intent(in) :: host
    character(len=*), intent(in) :: where
    integer, intent(out), optional :: stat
    logical :: ok
    ok = len_trim(host%fortran_type) > 0 .and. host%contiguous
    if (.not. ok) call fail(TESS_ERR_ARG, where, 'the host array must be a contiguous Fortran array (tess_array(x))', stat)
  end function

  function host_bytes(host) result(bytes)
    type(tess_array_ref), intent(in) :: host
    integer(c_size_t) :: bytes
    bytes = int(product(host%extents(1:host%rank)) * host%elem_bytes, c_size_t)
  end function

  ! ---- operators ---------------------------------------------------------------

  ! Whether operator op can be used (tess_op_check of tessera.h).
  subroutine tess_op_check(op, stat)
    character(len=*), intent(in) :: op
    integer, intent(out), optional :: stat
    character(kind=c_char), allocatable, target :: c_op(:)
    call c_string_to(op, c_op)
    call finish(c_tess_op_check(c_loc(c_op)), 'tess_op_check(' // op // ')', stat)
  end subroutine

  ! The buffers of op's kernel for a task, in the order a run takes them.
  subroutine tess_op_buffers(op, extents, dtype, buffers, stat)
    character(len=*), intent(in) :: op, dtype
    integer, intent(in) :: extents(:)
    type(tess_buffer), allocatable, intent(out) :: buffers(:)
    integer, intent(out), optional :: stat
    integer, parameter :: cap = 64
    type(c_buffer_info) :: info(cap)
    integer(c_int) :: n, st
    integer :: i, r
    st = c_tess_op_list_buffers(c_string(op), c_shape(extents), size(extents, kind=c_int), c_string(dtype), info, cap, n)
    if (st == TESS_OK) then
      allocate (buffers(n))
      do i = 1, n
        r = int(info(i)%rank)
        buffers(i)%name = chars_string(info(i)%name)
        buffers(i)%role = int(info(i)%role)
        buffers(i)%dtype = chars_string(info(i)%dtype)
        buffers(i)%elem_bytes = int(info(i)%elem_bytes)
        buffers(i)%count = info(i)%count
        buffers(i)%rank = r
        buffers(i)%extents(1:r) = extents(1:r)
        buffers(i)%advances = int(info(i)%advances) + 1
        buffers(i)%advanced = info(i)%advanced /= 0
        buffers(i)%lo = info(i)%lo
        buffers(i)%hi = info(i)%hi
      end do
    end if
    call finish(st, 'tess_op_buffers(' // task_text(op, extents, dtype) // ')', stat)
  end subroutine

  ! Compulsory bytes and operations of one application, and the relative
  ! tolerance of its outputs (|got - ref| <= tolerance * (1 + |ref|) per step).
  subroutine tess_op_counts(op, extents, dtype, bytes, flops, tolerance, stat)
    character(len=*), intent(in) :: op, dtype
    integer, intent(in) :: extents(:)
    real(real64), intent(out), optional :: bytes, flops, tolerance
    integer, intent(out), optional :: stat
    real(c_double) :: b, f, t
    integer(c_int) :: st
    st = c_tess_op_counts(c_string(op), c_shape(extents), size(extents, kind=c_int), c_string(dtype), b, f, t)
    if (present(bytes)) bytes = b
    if (present(flops)) flops = f
    if (present(tolerance)) tolerance = t
    call finish(st, 'tess_op_counts(' // task_text(op, extents, dtype) // ')', stat)
  end subroutine

  ! ---- conversions ---------------------------------------------------------------

  ! Extents fastest first (Fortran) as tessera's shape, slowest first.
  pure function c_shape(extents) result(shape)
    integer, intent(in) :: extents(:)
    integer(c_int64_t) :: shape(size(extents))
    shape = int(extents(size(extents):1:-1), c_int64_t)
  end function

  ! A NUL-terminated copy of s without its trailing blanks.
  pure function c_string(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char), allocatable :: c(:)
    integer :: i
    allocate (c(len_trim(s) + 1))
    do i = 1, len_trim(s)
      c(i) = s(i:i)
    end do
    c(size(c)) = c_null_char
  end function

  ! The same into an allocatable that a C pointer may point to.
  pure subroutine c_string_to(s, c)
    character(len=*), intent(in) :: s
    character(kind=c_char), allocatable, intent(out) :: c(:)
    allocate (c(len_trim(s) + 1))
    c = c_string(s)
  end subroutine

  ! The C string, or NULL for an empty one.
  function nullable(c) result(p)
    character(kind=c_char), intent(in), target :: c(:)
    type(c_ptr) :: p
    p = c_null_ptr
    if (size(c) > 1) p = c_loc(c)
  end function

  function f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    s = ''
    if (.not. c_associated(p)) return
    call c_f_pointer(p, chars, [c_strlen(p)])
    s = chars_string(chars)
  end function

  ! The characters of a C char array up to its NUL.
  pure function chars_string(chars) result(s)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=:), allocatable :: s
    integer :: i, n
    n = size(chars)
    do i = 1, size(chars)
      if (chars(i) == c_null_char) then
        n = i - 1
        exit
      end if
    end do
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  pure function int_text(i) result(s)
    integer(int64), intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: buf
    write (buf, '(i0)') i
    s = trim(buf)
  end function

  pure function extents_text(e) result(s)
    integer(int64), intent(in) :: e(:)
    character(len=:), allocatable :: s
    integer :: i
    s = '['
    do i = 1, size(e)
      s = s // int_text(e(i))
      if (i < size(e)) s = s // ','
    end do
    s = s // ']'
  end function

  function task_text(op, extents, dtype) result(s)
    character(len=*), intent(in) :: op, dtype
    integer, intent(in) :: extents(:)
    character(len=:), allocatable :: s
    s = trim(op) // ' ' // trim(dtype) // ' ' // extents_text(int(extents, int64))
  end function

  function buffer_names(b) result(s)
    type(tess_buffer), intent(in) :: b(:)
    character(len=:), allocatable :: s
    integer :: i
    s = int_text(int(size(b), int64)) // ' ('
    do i = 1, size(b)
      s = s // trim(b(i)%name)
      if (i < size(b)) s = s // ', '
    end do
    s = s // ')'
  end function
end module tessera
