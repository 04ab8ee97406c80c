! hdiff_example.f90 - the time loop of a climate model in miniature: a 3D
! field u(nx, ny, nz) (x longitude, periodic; y latitude; z the levels) is
! diffused horizontally every step by COSMO's monotone fourth-order scheme,
! tessera's `hdiff` operator (stencils/templates/hdiff.stencil). The model
! asks tessera once for the kernel tuned for its grid and calls it every
! step. A plain Fortran loop of the same stencil, in double precision, runs
! beside it, and the program fails when the fields differ by more than the
! operator's tolerance.
!
!   hdiff_example [STEPS [BUDGET]]    (defaults 40 steps, 6 evaluations;
!                                      budget 0: run the recorded or default config)
!
! The records go to $TESSERA_DB. Build against an installed tessera with
!   gfortran hdiff_example.f90 $(pkg-config --cflags --libs tessera-fortran)
! or find_package(tessera) and target_link_libraries(app tessera::tessera_fortran).
program hdiff_example
  use tessera
  use, intrinsic :: iso_fortran_env, only: real32, real64, error_unit
  implicit none
  integer, parameter :: nx = 64, ny = 48, nz = 6, dp = real64
  ! Two time levels of the model's field, and the diffusion coefficient.
  real(real32), allocatable, target :: u(:, :, :, :), coeff(:, :, :)
  real(dp), allocatable :: ref(:, :, :), ref_next(:, :, :), ref_coeff(:, :, :)
  type(tess_context) :: ctx
  type(tess_kernel) :: kernel
  type(tess_tune_report) :: report
  type(tess_buffer), allocatable :: buffers(:)
  integer :: steps, budget, step, now, next, i
  real(dp) :: tolerance, difference

  steps = argument(1, 40)
  budget = argument(2, 6)
  allocate (u(nx, ny, nz, 2), coeff(nx, ny, nz), ref_next(nx, ny, nz))
  call initial_state(u(:, :, :, 1), coeff)
  ref = real(u(:, :, :, 1), dp)
  ref_coeff = real(coeff, dp)

  ! The Fortran array u(nx, ny, nz) is the task hdiff:f32:NZxNYxNX: extents
  ! go fastest first, as shape() gives them.
  call tess_open(ctx)
  call tess_op_buffers('hdiff', shape(coeff), 'f32', buffers)
  write (*, '(a)', advance='no') 'hdiff buffers:'
  do i = 1, size(buffers)
    write (*, '(1x,a)', advance='no') trim(buffers(i)%name)
  end do
  write (*, *)
  if (budget > 0) then
    call tess_tune(ctx, 'hdiff', shape(coeff), 'f32', 'cpu', budget=budget, report=report)
    write (*, '(a,i0,a,a,a,f0.4,a,f0.4,a)') 'tuned in ', report%evaluations, ' evaluations: ', &
      trim(report%best_config), ' (', report%best_ms, ' ms, default ', report%default_ms, ' ms)'
  end if
  call tess_kernel_get(ctx, 'hdiff', shape(coeff), 'f32', 'cpu', kernel)
  write (*, '(a,a,a,a)') 'running the ', tess_kernel_origin(kernel), ' config: ', tess_kernel_config(kernel)

  ! The time loop: the kernel reads level `now` and writes level `next`.
  now = 1
  do step = 1, steps
    next = 3 - now
    call tess_kernel_run(kernel, [tess_array(u(:, :, :, now)), tess_array(coeff), tess_array(u(:, :, :, next))])
    now = next
    call hdiff_step(ref, ref_coeff, ref_next)
    ref = ref_next
  end do

  ! As `tessera run --check` compares: relative to the field's magnitude,
  ! within the tolerance of one step times the square root of the steps.
  call tess_op_counts('hdiff', shape(coeff), 'f32', tolerance=tolerance)
  tolerance = tolerance * sqrt(real(steps, dp))
  difference = maxval(abs(u(:, :, :, now) - ref)) / (1 + maxval(abs(ref)))
  write (*, '(a,i0,a,es10.3,a,es10.3,a)') 'after ', steps, ' steps the tuned kernel differs from the plain loop by ', &
    difference, ' (tolerance ', tolerance, ')'
  call tess_kernel_destroy(kernel)
  call tess_close(ctx)
  deallocate (u, coeff, ref, ref_next, ref_coeff, buffers)
  if (.not. difference <= tolerance) error stop 'hdiff_example: the fields differ beyond the tolerance'

contains

  ! Command-line argument i as a non-negative integer, or the default.
  integer function argument(i, default)
    integer, intent(in) :: i, default
    character(len=32) :: text
    integer :: ios
    argument = default
    if (command_argument_count() < i) return
    call get_command_argument(i, text)
    read (text, *, iostat=ios) argument
    if (ios /= 0 .or. argument < 0 .or. (i == 1 .and. argument < 1)) then
      write (error_unit, '(a)') 'usage: hdiff_example [STEPS [BUDGET]]  (STEPS >= 1, BUDGET >= 0; got ' // trim(text) // ')'
      stop 2, quiet=.true.
    end if
  end function

  ! A front along y, two blobs and a wave on every level; the coefficient in [0, 0.025].
  subroutine initial_state(u0, c)
    real(real32), intent(out) :: u0(:, :, :), c(:, :, :)
    real(dp), parameter :: pi = acos(-1.0_dp)
    real(dp) :: x, y, z
    integer :: i, j, k
    do k = 1, nz
      z = (k - 0.5_dp) / nz
      do j = 1, ny
        y = (j - 0.5_dp) / ny
        do i = 1, nx
          x = (i - 0.5_dp) / nx
          u0(i, j, k) = real(0.5_dp * tanh(12 * (y - 0.5_dp)) + bump(x - 0.3_dp, y - 0.25_dp - 0.5_dp * z, 0.08_dp) &
                             - 0.7_dp * bump(x - 0.7_dp, y - 0.7_dp, 0.06_dp) + 0.1_dp * sin(6 * pi * x) * cos(4 * pi * y), &
                             real32)
          c(i, j, k) = real(0.0125_dp * (1 + sin(2 * pi * x) * cos(2 * pi * y)), real32)
        end do
      end do
    end do
  end subroutine

  pure real(dp) function bump(dx, dy, width)
    real(dp), intent(in) :: dx, dy, width
    bump = exp(-(dx * dx + dy * dy) / (width * width))
  end function

  ! One step of hdiff as a model would write it: the Laplacian, fluxes of
  ! the Laplacian limited so that none runs up the gradient of u, and the
  ! update. x wraps around; the two rows at each end of y keep their values.
  pure subroutine hdiff_step(v, c, v_next)
    real(dp), intent(in) :: v(:, :, :), c(:, :, :)
    real(dp), intent(out) :: v_next(:, :, :)
    real(dp) :: lap(size(v, 1), size(v, 2)), flx, flx_west, fly, fly_south
    integer :: i, j, k, n, east, west
    n = size(v, 1)
    v_next = v
    do k = 1, size(v, 3)
      do j = 2, size(v, 2) - 1
        do i = 1, n
          east = modulo(i, n) + 1
          west = modulo(i - 2, n) + 1
          lap(i, j) = v(east, j, k) + v(west, j, k) + v(i, j + 1, k) + v(i, j - 1, k) - 4 * v(i, j, k)
        end do
      end do
      do j = 3, size(v, 2) - 2
        do i = 1, n
          east = modulo(i, n) + 1
          west = modulo(i - 2, n) + 1
          flx = limited(lap(east, j) - lap(i, j), v(east, j, k) - v(i, j, k))
          flx_west = limited(lap(i, j) - lap(west, j), v(i, j, k) - v(west, j, k))
          fly = limited(lap(i, j + 1) - lap(i, j), v(i, j + 1, k) - v(i, j, k))
          fly_south = limited(lap(i, j) - lap(i, j - 1), v(i, j, k) - v(i, j - 1, k))
          v_next(i, j, k) = v(i, j, k) - c(i, j, k) * (flx - flx_west + fly - fly_south)
        end do
      end do
    end do
  end subroutine

  ! A flux that would carry u uphill is zeroed (the limiter).
  pure real(dp) function limited(flux, gradient)
    real(dp), intent(in) :: flux, gradient
    limited = merge(0.0_dp, flux, flux * gradient > 0)
  end function
end program hdiff_example
