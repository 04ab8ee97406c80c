! test_fortran_api.f90 - the Fortran module `tessera`: its bind(C) types
! against the C layout, statuses and messages through `stat`, buffers of a
! task in Fortran order, runs on arrays of any lower bounds and rank, the
! checks of arrays against buffers, tuning's report and dispatch.
!
!   test_fortran_api          the tests (records in fortran_api.db, here)
!   test_fortran_api stop     a failure without stat: stops with the message
program test_fortran_api
  use tessera
  use tessera_c, only: c_tune_options, c_tune_report, c_dispatch_options, c_buffer_info
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: real32, real64, int64
  implicit none
  integer, parameter :: nx = 16, ny = 12, nz = 3
  integer, parameter :: tuned(3) = [nx, ny, 2]   ! the task tuned; [nx, ny, nz] is not
  type(tess_tune_report) :: report
  integer :: failures = 0

  interface
    function tess_test_sizeof(type) bind(c, name='tess_test_sizeof')
      import :: c_char, c_size_t
      character(kind=c_char), intent(in) :: type(*)
      integer(c_size_t) :: tess_test_sizeof
    end function
  end interface

  character(len=16) :: mode
  type(tess_context) :: ctx

  call get_command_argument(1, mode)
  if (mode == 'stop') call stop_without_stat()

  call test_layout()
  call test_open_failure()
  call remove_file('fortran_api.db')
  call tess_open(ctx, 'fortran_api.db')
  ! Tuning forks; a process must tune before it runs kernels itself.
  call test_tune(ctx)
  call test_buffers()
  call test_unknown_operator(ctx)
  call test_run(ctx)
  call test_array_checks(ctx)
  call test_tuned_kernels(ctx)
  call tess_close(ctx)
  call check(.not. c_associated(ctx%ptr), 'tess_close leaves no pointer')

  if (failures > 0) error stop 'test_fortran_api: failures'
  print '(a)', 'test_fortran_api: all passed'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) return
    failures = failures + 1
    print '(a)', 'FAIL: ' // what
  end subroutine

  subroutine remove_file(path)
    character(len=*), intent(in) :: path
    integer :: unit, ios
    open (newunit=unit, file=path, status='old', iostat=ios)
    if (ios == 0) close (unit, status='delete')
  end subroutine

  ! The mirrors of tessera.h's structs have the C compiler's sizes.
  subroutine test_layout()
    type(c_tune_options) :: options
    type(c_tune_report) :: report
    type(c_dispatch_options) :: dispatch
    type(c_buffer_info) :: buffer
    call check(c_sizeof(options) == tess_test_sizeof('tess_tune_options' // c_null_char), 'tess_tune_options size')
    call check(c_sizeof(report) == tess_test_sizeof('tess_tune_report' // c_null_char), 'tess_tune_report size')
    call check(c_sizeof(dispatch) == tess_test_sizeof('tess_dispatch_options' // c_null_char), &
               'tess_dispatch_options size')
    call check(c_sizeof(buffer) == tess_test_sizeof('tess_buffer_info' // c_null_char), 'tess_buffer_info size')
  end subroutine

  ! A database that cannot be created: a status and the library's message.
  subroutine test_open_failure()
    type(tess_context) :: bad
    integer :: stat, unit
    logical :: exists
    open (newunit=unit, file='not_a_directory', status='replace')
    close (unit)
    call tess_open(bad, 'not_a_directory/records.db', stat=stat)
    call check(stat /= TESS_OK, 'tess_open under a file fails')
    call check(index(tess_errmsg(), 'not_a_directory') > 0, 'its message names the path: ' // tess_errmsg())
    call tess_close(bad)
    call tess_open(bad, 'missing.db', readonly=.true., stat=stat)
    call check(stat == TESS_ERR_NOTFOUND, 'a missing database opened read-only is not found')
    inquire (file='missing.db', exist=exists)
    call check(.not. exists, 'and reading it creates nothing')
  end subroutine

  ! hdiff's buffers, with extents fastest first.
  subroutine test_buffers()
    type(tess_buffer), allocatable :: b(:)
    integer :: stat
    call tess_op_buffers('hdiff', [nx, ny, nz], 'f32', b, stat=stat)
    call check(stat == TESS_OK, 'tess_op_buffers(hdiff)')
    if (stat /= TESS_OK) return
    call check(size(b) == 3, 'hdiff has 3 buffers')
    if (size(b) /= 3) return
    call check(b(1)%name == 'u' .and. b(2)%name == 'coeff' .and. b(3)%name == 'u_out', 'names u, coeff, u_out')
    call check(b(1)%role == TESS_BUFFER_INPUT .and. b(3)%role == TESS_BUFFER_OUTPUT, 'roles')
    call check(b(3)%advances == 1 .and. b(1)%advanced .and. .not. b(2)%advanced, 'u_out advances u (index 1)')
    call check(b(1)%dtype == 'f32' .and. b(1)%elem_bytes == 4, 'dtype f32')
    call check(b(2)%rank == 3 .and. all(b(2)%extents(1:3) == [nx, ny, nz]), 'extents fastest first')
    call check(b(2)%count == int(nx * ny * nz, int64), 'count')
    call check(b(2)%lo == 0 .and. b(2)%hi > 0, 'the coefficient range')
  end subroutine

  subroutine test_unknown_operator(c)
    type(tess_context), intent(in) :: c
    type(tess_kernel) :: k
    integer :: stat
    call tess_kernel_get(c, 'nosuch', [8, 8, 2], 'f32', 'cpu', k, stat=stat)
    call check(stat == TESS_ERR_ARG, 'an unknown operator is TESS_ERR_ARG')
    call check(index(tess_errmsg(), "unknown operator 'nosuch'") > 0, 'message: ' // tess_errmsg())
    call check(tess_status_name(stat) /= '', 'a status name')
  end subroutine

  ! A field and coefficient that vary everywhere.
  subroutine fill(u, c)
    real(real32), intent(out) :: u(:, :, :), c(:, :, :)
    integer :: i, j, k
    do k = 1, size(u, 3)
      do j = 1, size(u, 2)
        do i = 1, size(u, 1)
          u(i, j, k) = real(sin(0.7 * i + 0.3 * j * j) + 0.1 * k, real32)
          c(i, j, k) = real(0.01 + 0.001 * modulo(i + 2 * j + k, 7), real32)
        end do
      end do
    end do
  end subroutine

  ! One step on arrays of other lower bounds, and on flat arrays, gives the
  ! same numbers; the two rows at each end of y keep their values, the
  ! other points change.
  subroutine test_run(c)
    type(tess_context), intent(in) :: c
    type(tess_kernel) :: k
    real(real32), target :: u(nx, ny, nz), coeff(nx, ny, nz), out(nx, ny, nz)
    real(real32), target :: u0(0:nx - 1, -2:ny - 3, nz), coeff0(0:nx - 1, -2:ny - 3, nz), out0(0:nx - 1, -2:ny - 3, nz)
    real(real32), target :: flat_out(nx * ny * nz)
    integer :: stat
    call fill(u, coeff)
    u0 = u
    coeff0 = coeff
    call tess_kernel_get(c, 'hdiff', shape(u), 'f32', 'cpu', k, stat=stat)
    call check(stat == TESS_OK, 'tess_kernel_get(hdiff): ' // tess_errmsg())
    if (stat /= TESS_OK) return
    call check(tess_kernel_origin(k) /= 'exact', 'an untuned task has no exact config: ' // tess_kernel_origin(k))
    call check(index(tess_kernel_config(k), 'tile_y=') > 0, 'config: ' // tess_kernel_config(k))
    call tess_kernel_run(k, [tess_array(u), tess_array(coeff), tess_array(out)], stat=stat)
    call check(stat == TESS_OK, 'run: ' // tess_errmsg())
    call tess_kernel_run(k, [tess_array(u0), tess_array(coeff0), tess_array(out0)], stat=stat)
    call check(stat == TESS_OK, 'run with lower bounds: ' // tess_errmsg())
    call check(all(out0 == out), 'lower bounds change nothing')
    call tess_kernel_run(k, [tess_array(u), tess_array(coeff), tess_array(flat_out)], stat=stat)
    call check(stat == TESS_OK, 'run on a flat output of as many elements: ' // tess_errmsg())
    call check(all(reshape(flat_out, shape(out)) == out), 'a flat output holds the same')
    call check(all(out(:, [1, 2, ny - 1, ny], :) == u(:, [1, 2, ny - 1, ny], :)), 'the band of y keeps its values')
    call check(all(out(:, 3:ny - 2, :) /= u(:, 3:ny - 2, :)), 'every other point changes')
    call tess_kernel_set_scalar(k, 'no_such_scalar', 1.0_real64, stat=stat)
    call check(stat == TESS_ERR_ARG .and. index(tess_errmsg(), 'no_such_scalar') > 0, &
               'an unknown scalar: ' // tess_errmsg())
    call tess_kernel_set_extent(k, 'x', 8, stat=stat)
    call check(stat == TESS_ERR_ARG, 'a compiled-in extent is refused: ' // tess_errmsg())
    call tess_kernel_destroy(k)
    call check(.not. c_associated(k%ptr), 'destroy clears the kernel')
    call tess_kernel_run(k, [tess_array(u), tess_array(coeff), tess_array(out)], stat=stat)
    call check(stat == TESS_ERR_ARG .and. index(tess_errmsg(), 'the kernel is not set') > 0, &
               'a destroyed kernel: ' // tess_errmsg())
  end subroutine

  ! Arrays that do not fit the buffers are refused, saying which and why.
  subroutine test_array_checks(c)
    type(tess_context), intent(in) :: c
    type(tess_kernel) :: k
    real(real32), target :: u(nx, ny, nz), coeff(nx, ny, nz), out(nx, ny, nz), wide(2 * nx, ny, nz)
    real(real32), target :: short(nx, ny - 1, nz)
    real(real64), target :: u64(nx, ny, nz)
    integer :: stat
    call fill(u, coeff)
    call tess_kernel_get(c, 'hdiff', shape(u), 'f32', 'cpu', k)
    out = -7
    call tess_kernel_run(k, [tess_array(u), tess_array(coeff)], stat=stat)
    call check(stat == TESS_ERR_ARG .and. index(tess_errmsg(), 'got 2 arrays, the kernel takes 3 (u, coeff, u_out)') > 0, &
               'too few arrays: ' // tess_errmsg())
    call tess_kernel_run(k, [tess_array(u64), tess_array(coeff), tess_array(out)], stat=stat)
    call check(stat == TESS_ERR_ARG .and. index(tess_errmsg(), "array 1 ('u') is real(real64)") > 0 .and. &
               index(tess_errmsg(), 'pass real(real32)') > 0, 'a real64 array for f32: ' // tess_errmsg())
    call tess_kernel_run(k, [tess_array(u), tess_array(short), tess_array(out)], stat=stat)
    call check(stat == TESS_ERR_ARG .and. index(tess_errmsg(), "array 2 ('coeff') has shape [16,11,3], the buffer [16,12,3]") &
               > 0, 'a wrong shape: ' // tess_errmsg())
    call tess_kernel_run(k, [tess_array(u), tess_array(coeff), tess_array(wide(::2, :, :))], stat=stat)
    call check(stat == TESS_ERR_ARG .and. index(tess_errmsg(), "array 3 ('u_out') is not contiguous") > 0, &
               'a strided section: ' // tess_errmsg())
    call tess_kernel_run(k, [tess_array(u), tess_array(coeff), tess_array(short(:, 1, 1))], stat=stat)
    call check(stat == TESS_ERR_ARG .and. index(tess_errmsg(), 'has 16 elements, the buffer 576') > 0, &
               'a flat array of another size: ' // tess_errmsg())
    call tess_kernel_run(k, [tess_array(u), tess_array(coeff), tess_device_array(c_null_ptr)], stat=stat)
    call check(stat == TESS_ERR_ARG .and. index(tess_errmsg(), 'null pointer') > 0, 'a null pointer: ' // tess_errmsg())
    call check(all(out == -7), 'a refused run writes nothing')
    call tess_kernel_destroy(k)
  end subroutine

  ! Tuning fills the report.
  subroutine test_tune(c)
    type(tess_context), intent(in) :: c
    integer :: stat
    call tess_tune(c, 'hdiff', tuned, 'f32', 'cpu', budget=2, seed=7_int64, transfer='off', report=report, stat=stat)
    call check(stat == TESS_OK, 'tess_tune: ' // tess_errmsg())
    call check(report%evaluations == 2, 'two evaluations')
    call check(sum(report%status_counts) == report%evaluations, 'status counts add up')
    call check(report%status_counts(1) >= 1 .and. report%best_ms > 0 .and. report%default_ms > 0, &
               'times of the best and the default')
    call check(index(report%best_config, 'tile_y=') > 0, 'best config: ' // trim(report%best_config))
    call check(len_trim(report%device) > 0 .and. len_trim(report%stop_reason) > 0, 'device and stop reason')
    call check(report%elapsed_s > 0, 'elapsed time')
    ! hdiff has no shortcut: its best config is the best exact one
    call check(report%best_error >= 0 .and. report%best_exact_config == report%best_config .and. &
               report%best_exact_ms == report%best_ms, 'the best config is exact, with its error')
  end subroutine

  ! The tuned config is the exact one, from tess_kernel_get and from dispatch.
  subroutine test_tuned_kernels(c)
    type(tess_context), intent(in) :: c
    type(tess_kernel) :: k
    real(real32), target :: u(nx, ny, 2), coeff(nx, ny, 2), out(nx, ny, 2), out_dispatched(nx, ny, 2)
    integer :: stat
    call fill(u, coeff)
    call tess_kernel_get(c, 'hdiff', tuned, 'f32', 'cpu', k)
    call check(tess_kernel_origin(k) == 'exact', 'a tuned task runs the exact config')
    call check(tess_kernel_config(k) == trim(report%best_config), 'the best config')
    call tess_kernel_run(k, [tess_array(u), tess_array(coeff), tess_array(out)])
    call tess_kernel_destroy(k)

    call tess_dispatch(c, 'hdiff', tuned, 'f32', 'cpu', k, stat=stat)
    call check(stat == TESS_OK, 'tess_dispatch: ' // tess_errmsg())
    if (stat /= TESS_OK) return
    call check(tess_kernel_origin(k) == 'exact' .and. tess_kernel_config(k) == trim(report%best_config), 'dispatch: exact')
    call tess_kernel_run(k, [tess_array(u), tess_array(coeff), tess_array(out_dispatched)])
    call check(all(out_dispatched == out), 'dispatch runs the same config')
    call tess_kernel_destroy(k)   ! the context's: only forgotten
    call check(.not. c_associated(k%ptr), 'destroy forgets a dispatched kernel')
  end subroutine

  ! Without stat, a failure stops the program with the library's message.
  subroutine stop_without_stat()
    type(tess_context) :: c
    type(tess_kernel) :: k
    call tess_open(c, 'fortran_stop.db')
    call tess_kernel_get(c, 'nosuch', [8, 8, 2], 'f32', 'cpu', k)
    print '(a)', 'test_fortran_api: not stopped'
  end subroutine
end program test_fortran_api
