"""
Constant-velocity Kalman filters, batched over tracks, with time steps in seconds.

State per track: D positions then their D velocities ([p, v]). The process noise is the
continuous white-noise acceleration model, integrated over the actual time step, so a filter fed
at 10 Hz, at 30 Hz or with dropped frames converges to the same velocity: only the stamps set
how far a prediction goes and how much uncertainty it adds.

Batched (arrays [N, 2D] and [N, 2D, 2D]) because a frame updates every track at once, and one
numpy call over all tracks costs far less than one per track.
"""
from __future__ import annotations

import numpy as np


def transition(dt: np.ndarray, dims: int) -> np.ndarray:
    """F [N, 2D, 2D]: p += v dt for each of the D axes."""
    count = len(dt)
    matrix = np.broadcast_to(np.eye(2 * dims), (count, 2 * dims, 2 * dims)).copy()
    index = np.arange(dims)
    matrix[:, index, index + dims] = dt[:, None]
    return matrix


def process_noise(dt: np.ndarray, acceleration_std: np.ndarray) -> np.ndarray:
    """
    Q [N, 2D, 2D] of a white-noise acceleration with spectral density sigma^2 per axis.

    acceleration_std is [N, D]: per track and axis, so that image axes can scale with the
    box size. Q = q [[dt^3/3, dt^2/2], [dt^2/2, dt]] for each axis.
    """
    count, dims = acceleration_std.shape
    density = acceleration_std ** 2
    noise = np.zeros((count, 2 * dims, 2 * dims))
    index = np.arange(dims)
    dt = dt[:, None]
    noise[:, index, index] = density * dt ** 3 / 3.0
    noise[:, index, index + dims] = density * dt ** 2 / 2.0
    noise[:, index + dims, index] = density * dt ** 2 / 2.0
    noise[:, index + dims, index + dims] = density * dt
    return noise


def predict(mean: np.ndarray, covariance: np.ndarray, dt: np.ndarray,
            acceleration_std: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Advance every track by its own dt (s); dt 0 leaves a track unchanged."""
    if len(mean) == 0:
        return mean, covariance
    dims = mean.shape[1] // 2
    step = transition(dt, dims)
    new_mean = np.einsum('nij,nj->ni', step, mean)
    new_covariance = step @ covariance @ step.transpose(0, 2, 1) + process_noise(
        dt, acceleration_std)
    return new_mean, new_covariance


def update(mean: np.ndarray, covariance: np.ndarray, measured: np.ndarray,
           measurement_covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def small_inverse(matrices: np.ndarray) -> np.ndarray:
    """
    Invert symmetric positive-definite matrices [N, D, D], in closed form where it exists.

    LAPACK's batched calls cost more than the whole tracker update on a small CPU. Diagonal
    batches (the image filter: its axes never couple) invert element-wise; 2x2 ones (the
    ground filter) by the adjugate.
    """
    dims = matrices.shape[1]
    diagonal = np.diagonal(matrices, axis1=1, axis2=2)
    if not np.any(matrices - diagonal[:, :, None] * np.eye(dims)):
        return (1.0 / diagonal)[:, :, None] * np.eye(dims)
    if dims == 2:
        a, b, c, d = (matrices[:, 0, 0], matrices[:, 0, 1], matrices[:, 1, 0],
                      matrices[:, 1, 1])
        determinant = a * d - b * c
        inverse: np.ndarray = np.stack([np.stack([d, -b], axis=1), np.stack([-c, a], axis=1)],
                                       axis=1) / determinant[:, None, None]
        return inverse
    return np.linalg.inv(matrices)


def initial_state(positions: np.ndarray, position_std: np.ndarray,
                  velocity_std: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start tracks at measured positions [N, D], at rest, with the given uncertainties."""
    count, dims = positions.shape
    mean = np.concatenate([positions, np.zeros((count, dims))], axis=1)
    variances = np.concatenate([position_std, velocity_std], axis=1) ** 2
    covariance = np.zeros((count, 2 * dims, 2 * dims))
    index = np.arange(2 * dims)
    covariance[:, index, index] = variances
    return mean, covariance
