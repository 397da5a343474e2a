"""
Constant-velocity Kalman filters, batched over tracks, with time steps in seconds.

State per track: D positions then their D velocities ([p, v]). The process noise is the
continuous white-noise acceleration model, integrated over the actual time step, so a filter fed
at 10 Hz, at 30 Hz or with dropped frames converges to the same velocity: only the stamps set
how far a prediction goes and how much uncertainty it adds.

Batched (arrays [N, 2D] and [N, 2D, 2D]) because a frame updates every track at once, and one
numpy call over all tracks costs far less than one per track. A frame has one time step for
every track, so the transition is one matrix broadcast over the tracks.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

# Every array here is float64: means [N, 2D], covariances [N, 2D, 2D], noise and transitions.
Floats = NDArray[np.float64]


@lru_cache(maxsize=None)
def axis_entries(dims: int) -> tuple[slice[int, int, int], slice[int, int, int],
                                     slice[int, int, int], slice[int, int, int]]:
    """
    Return slices of a row-major flattened [2D, 2D] covariance, one entry per axis each.

    Per axis a: (a, a), (a, D + a), (D + a, a) and (D + a, D + a). Only these entries of a
    constant-velocity covariance couple an axis's position with its own velocity; basic
    slices give them as views, without fancy-index copies.
    """
    size = 2 * dims
    step = size + 1
    starts = (0, dims, dims * size, dims * size + dims)
    return tuple(slice(start, start + (dims - 1) * step + 1, step)  # type: ignore[return-value]
                 for start in starts)


def transition(dt: float, dims: int) -> Floats:
    """F [2D, 2D]: p += v dt for each of the D axes."""
    matrix = np.eye(2 * dims)
    matrix.reshape(-1)[axis_entries(dims)[1]] = dt
    return matrix


def add_process_noise(covariance: Floats, dt: float, acceleration_std: Floats) -> None:
    """
    Add Q of a white-noise acceleration with spectral density sigma^2 per axis, in place.

    `covariance` is [N, 2D, 2D] and C-contiguous; acceleration_std is [N, D]: per track and
    axis, so that image axes can scale with the box size. Q = q [[dt^3/3, dt^2/2],
    [dt^2/2, dt]] for each axis, and zero between axes.
    """
    count, dims = acceleration_std.shape
    density = acceleration_std ** 2
    # Powers of dt from numpy's own loops, as for a per-track array of time steps.
    step = np.full((1, 1), dt)
    flat = covariance.view()
    flat.shape = (count, -1)  # raises rather than copy: the additions must land in place
    position, position_velocity, velocity_position, velocity = axis_entries(dims)
    flat[:, position] += density * step ** 3 / 3.0
    cross = density * step ** 2 / 2.0
    flat[:, position_velocity] += cross
    flat[:, velocity_position] += cross
    flat[:, velocity] += density * step


def predict(mean: Floats, covariance: Floats, dt: float,
            acceleration_std: Floats) -> tuple[Floats, Floats]:
    """Advance every track by dt (s); dt 0 leaves a track unchanged."""
    if len(mean) == 0:
        return mean, covariance
    step = transition(dt, mean.shape[1] // 2)
    new_mean = np.einsum('nij,nj->ni', step[None], mean)
    new_covariance = step @ covariance @ step.T
    add_process_noise(new_covariance, dt, acceleration_std)
    return new_mean, new_covariance


def update(mean: Floats, covariance: Floats, measured: Floats,
           measurement_covariance: Floats) -> tuple[Floats, Floats]:
    """Correct tracks [N] with measured positions [N, D] of covariance [N, D, D]."""
    if len(mean) == 0:
        return mean, covariance
    dims = measured.shape[1]
    innovation = measured - mean[:, :dims]
    # H selects the positions, so H P H^T and P H^T are slices of P.
    projected = covariance[:, :dims, :dims] + measurement_covariance
    cross = covariance[:, :, :dims]
    gain = cross @ small_inverse(projected)
    new_mean = mean + np.einsum('nij,nj->ni', gain, innovation)
    new_covariance = covariance - gain @ cross.transpose(0, 2, 1)
    # Symmetric against rounding, so that covariances stay valid over long tracks.
    new_covariance = (new_covariance + new_covariance.transpose(0, 2, 1)) / 2.0
    return new_mean, new_covariance


def update_uncoupled(mean: Floats, covariance: Floats, measured: Floats,
                     measurement_variance: Floats) -> tuple[Floats, Floats]:
    """
    `update` for filters whose axes never couple: measurement noise variances [N, D].

    With a diagonal measurement noise and a covariance that started diagonal, each axis stays
    a filter of its own, with only the `axis_entries` of its covariance non-zero. Every entry
    of `update`'s matrix products then has a single non-zero term, so these element-wise
    products give the same numbers with a fraction of the numpy calls.
    """
    count, dims = measured.shape
    flat = covariance.reshape(count, -1)
    position, position_velocity, velocity_position, velocity = (
        flat[:, entries] for entries in axis_entries(dims))
    inverse = 1.0 / (position + measurement_variance)
    position_gain = position * inverse
    velocity_gain = velocity_position * inverse
    innovation = measured - mean[:, :dims]
    new_mean = mean.copy()
    new_mean[:, :dims] += position_gain * innovation
    new_mean[:, dims:] += velocity_gain * innovation
    new_flat = flat.copy()
    new_position, new_position_velocity, new_velocity_position, new_velocity = (
        new_flat[:, entries] for entries in axis_entries(dims))
    # P - K H P, made symmetric as `update` does (the diagonal is its own mirror image).
    new_position -= position_gain * position
    new_velocity -= velocity_gain * velocity_position
    correlation = ((position_velocity - position_gain * velocity_position)
                   + (velocity_position - velocity_gain * position)) / 2.0
    new_position_velocity[...] = correlation
    new_velocity_position[...] = correlation
    return new_mean, new_flat.reshape(covariance.shape)


def small_inverse(matrices: Floats) -> Floats:
    """
    Invert symmetric positive-definite matrices [N, D, D], in closed form where it exists.

    LAPACK's batched calls cost more than the whole tracker update on a small CPU. Diagonal
    batches invert element-wise; 2x2 ones (the ground filter) by the adjugate.
    """
    dims = matrices.shape[1]
    diagonal = np.diagonal(matrices, axis1=1, axis2=2)
    identity = _identity(dims)
    if not np.any(matrices - diagonal[:, :, None] * identity):
        diagonal_inverse: Floats = (1.0 / diagonal)[:, :, None] * identity
        return diagonal_inverse
    if dims == 2:
        a, b, c, d = (matrices[:, 0, 0], matrices[:, 0, 1], matrices[:, 1, 0],
                      matrices[:, 1, 1])
        determinant = a * d - b * c
        adjugate = np.empty_like(matrices)
        adjugate[:, 0, 0] = d
        adjugate[:, 0, 1] = -b
        adjugate[:, 1, 0] = -c
        adjugate[:, 1, 1] = a
        adjugate /= determinant[:, None, None]
        return adjugate
    inverse: Floats = np.linalg.inv(matrices)
    return inverse


@lru_cache(maxsize=None)
def _identity(dims: int) -> Floats:
    identity = np.eye(dims)
    identity.flags.writeable = False
    return identity


def initial_state(positions: Floats, position_std: Floats,
                  velocity_std: Floats) -> tuple[Floats, Floats]:
    """Start tracks at measured positions [N, D], at rest, with the given uncertainties."""
    count, dims = positions.shape
    mean = np.concatenate([positions, np.zeros((count, dims))], axis=1)
    variances = np.concatenate([position_std, velocity_std], axis=1) ** 2
    covariance = np.zeros((count, 2 * dims, 2 * dims))
    index = np.arange(2 * dims)
    covariance[:, index, index] = variances
    return mean, covariance
