// Package pydpcore is a Go binding of pydp_core's C ABI (pydp/capi.h, docs/cpp.md): exact calibration,
// the keyed ChaCha20 generator and its samplers, exact releases on a grid and certified privacy-loss
// distributions. It links the shared library libpydp_capi.so.1 of an installed pydp_core:
//
//	dir=$(python -c 'import pydp_core as p; print(p.get_library_dir())')
//	inc=$(python -c 'import pydp_core as p; print(p.get_include())')
//	CGO_CFLAGS="-I$inc" CGO_LDFLAGS="-L$dir -Wl,-rpath,$dir" go build ./...
//
// Every call returns an *Error (the library's status code and the calling thread's message) instead of
// a failed result; nothing panics for bad arguments.
package pydpcore

/*
#cgo LDFLAGS: -l:libpydp_capi.so.1
#include "pydp/capi.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Family is a standard symmetric log-concave noise family (Vinterbo 2022).
type Family int

// The families of the C ABI; Subbotin needs an order r >= 1, the others ignore r.
const (
	Laplace  Family = C.PYDP_LAPLACE
	Gaussian Family = C.PYDP_GAUSSIAN
	Logistic Family = C.PYDP_LOGISTIC
	Subbotin Family = C.PYDP_SUBBOTIN
)

// Neighbouring relations of a privacy-loss distribution.
const (
	AddRemove    = C.PYDP_ADD_REMOVE
	Substitution = C.PYDP_SUBSTITUTION
)

// Error is a failed call: the pydp_status code and pydp_last_error's message.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

// call runs f on one OS thread (the library's message is thread-local) and turns its status into an error.
func call(f func() C.pydp_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rc := f()
	if rc == C.PYDP_OK {
		return nil
	}
	return &Error{Code: int(rc), Message: C.GoString(C.pydp_last_error())}
}

// Version is the library's release, e.g. "0.1.0".
func Version() string { return C.GoString(C.pydp_version()) }

// ABIVersion is PYDP_ABI_VERSION of the library loaded.
func ABIVersion() int { return int(C.pydp_abi_version()) }

// MinimalScale is the verified minimal noise scale for (epsilon, delta)-DP at this sensitivity.
func MinimalScale(f Family, r, epsilon, delta, sensitivity float64) (float64, error) {
	var s C.double
	err := call(func() C.pydp_status {
		return C.pydp_minimal_scale(C.int(f), C.double(r), C.double(epsilon), C.double(delta), C.double(sensitivity), &s)
	})
	return float64(s), err
}

// PrivacyProfile is the smallest delta for which the mechanism at this scale is (epsilon, delta)-DP.
func PrivacyProfile(f Family, r, epsilon, scale, sensitivity float64) (float64, error) {
	var d C.double
	err := call(func() C.pydp_status {
		return C.pydp_privacy_profile(C.int(f), C.double(r), C.double(epsilon), C.double(scale), C.double(sensitivity), &d)
	})
	return float64(d), err
}

// EpsilonForDelta is the smallest epsilon whose privacy profile is <= delta, rounded up.
func EpsilonForDelta(f Family, r, delta, scale, sensitivity float64) (float64, error) {
	var e C.double
	err := call(func() C.pydp_status {
		return C.pydp_epsilon_for_delta(C.int(f), C.double(r), C.double(delta), C.double(scale), C.double(sensitivity), &e)
	})
	return float64(e), err
}

// GridPlan is a calibrated discrete Laplace or Gaussian release plan (pydp_grid_plan): the noise parameter
// Num / Den in grid steps (t, or sigma^2), the grid 2^GridExponent, the integer shift on the grid and the
// exact delta of the plan.
type GridPlan struct {
	Num, Den      uint64
	GridExponent  int
	Shift         uint64
	DeltaAchieved float64
}

func gridPlan(p C.pydp_grid_plan) GridPlan {
	return GridPlan{uint64(p.num), uint64(p.den), int(p.grid_exponent), uint64(p.shift), float64(p.delta_achieved)}
}

// CalibrateLaplaceRelease is the verified smallest discrete Laplace plan for (epsilon, delta) at this
// sensitivity (gridBits: 16 is the Python default).
func CalibrateLaplaceRelease(epsilon, delta, sensitivity float64, gridBits int) (GridPlan, error) {
	var p C.pydp_grid_plan
	err := call(func() C.pydp_status {
		return C.pydp_calibrate_laplace_release(C.double(epsilon), C.double(delta), C.double(sensitivity), C.int(gridBits), &p)
	})
	return gridPlan(p), err
}

// CalibrateGaussianRelease is the verified smallest discrete Gaussian plan for (epsilon, delta), delta > 0.
func CalibrateGaussianRelease(epsilon, delta, sensitivity float64, gridBits int) (GridPlan, error) {
	var p C.pydp_grid_plan
	err := call(func() C.pydp_status {
		return C.pydp_calibrate_gaussian_release(C.double(epsilon), C.double(delta), C.double(sensitivity), C.int(gridBits), &p)
	})
	return gridPlan(p), err
}

// Rng is a keyed ChaCha20 generator; not safe for use by two goroutines at once (Spawn one for each).
type Rng struct{ p *C.pydp_rng }

func wrapRng(p *C.pydp_rng) *Rng {
	r := &Rng{p}
	runtime.SetFinalizer(r, (*Rng).Close)
	return r
}

// NewRngOS is a generator with a fresh 256-bit key from the operating system: the one for releases.
func NewRngOS() (*Rng, error) {
	var p *C.pydp_rng
	if err := call(func() C.pydp_status { return C.pydp_rng_new_os(&p) }); err != nil {
		return nil, err
	}
	return wrapRng(p), nil
}

// NewRng is the reproducible generator of a chosen key and stream (tests and simulations only).
func NewRng(key [32]byte, stream uint64) (*Rng, error) {
	var p *C.pydp_rng
	if err := call(func() C.pydp_status {
		return C.pydp_rng_new((*C.uint8_t)(unsafe.Pointer(&key[0])), C.uint64_t(stream), &p)
	}); err != nil {
		return nil, err
	}
	return wrapRng(p), nil
}

// Spawn is the independent generator for task or partition i.
func (r *Rng) Spawn(i uint64) (*Rng, error) {
	var p *C.pydp_rng
	if err := call(func() C.pydp_status { return C.pydp_rng_spawn(r.p, C.uint64_t(i), &p) }); err != nil {
		return nil, err
	}
	return wrapRng(p), nil
}

// Close frees the generator (also done by the garbage collector).
func (r *Rng) Close() {
	if r.p != nil {
		C.pydp_rng_free(r.p)
		r.p = nil
	}
}

func f64(x []float64) *C.double {
	if len(x) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&x[0]))
}

// FillU64 writes the next len(out) 64-bit words of the stream.
func (r *Rng) FillU64(out []uint64) error {
	var p *C.uint64_t
	if len(out) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&out[0]))
	}
	return call(func() C.pydp_status { return C.pydp_rng_fill_u64(r.p, p, C.size_t(len(out))) })
}

// Normal fills out with loc + scale * N(0, 1) on `threads` worker threads (0: all cores; the values do
// not depend on it).
func (r *Rng) Normal(loc, scale float64, out []float64, threads uint) error {
	return call(func() C.pydp_status {
		return C.pydp_rng_normal(r.p, C.double(loc), C.double(scale), f64(out), C.size_t(len(out)), C.uint(threads))
	})
}

// Laplace fills out with Laplace noise of this location and scale.
func (r *Rng) Laplace(loc, scale float64, out []float64, threads uint) error {
	return call(func() C.pydp_status {
		return C.pydp_rng_laplace(r.p, C.double(loc), C.double(scale), f64(out), C.size_t(len(out)), C.uint(threads))
	})
}

// ReleaseLaplace is the exact discrete Laplace release of x on the grid 2^gridExponent with
// t = tNum / tDen grid steps, clamped to [low, high] (a calibrated plan's parameters).
func (r *Rng) ReleaseLaplace(tNum, tDen uint64, gridExponent int, low, high float64, x []float64, threads uint) ([]float64, error) {
	out := make([]float64, len(x))
	err := call(func() C.pydp_status {
		return C.pydp_release_laplace(r.p, C.uint64_t(tNum), C.uint64_t(tDen), C.int(gridExponent), C.double(low), C.double(high),
			f64(x), f64(out), C.size_t(len(x)), C.uint(threads))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReleaseGaussian is the exact discrete Gaussian release, sigma^2 = sigma2Num / sigma2Den grid steps squared.
func (r *Rng) ReleaseGaussian(sigma2Num, sigma2Den uint64, gridExponent int, low, high float64, x []float64, threads uint) ([]float64, error) {
	out := make([]float64, len(x))
	err := call(func() C.pydp_status {
		return C.pydp_release_gaussian(r.p, C.uint64_t(sigma2Num), C.uint64_t(sigma2Den), C.int(gridExponent), C.double(low),
			C.double(high), f64(x), f64(out), C.size_t(len(x)), C.uint(threads))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Pld is an immutable, certified privacy-loss distribution of a composition.
type Pld struct{ p *C.pydp_pld }

func wrapPld(p *C.pydp_pld) *Pld {
	d := &Pld{p}
	runtime.SetFinalizer(d, (*Pld).Close)
	return d
}

// PldFromNoise is one mechanism q(d) + scale * X with Poisson sampling at rate q on the grid valueStep.
func PldFromNoise(f Family, r, scale, sensitivity, q float64, neighbours int, valueStep float64) (*Pld, error) {
	var p *C.pydp_pld
	if err := call(func() C.pydp_status {
		return C.pydp_pld_from_noise(C.int(f), C.double(r), C.double(scale), C.double(sensitivity), C.double(q), C.int(neighbours),
			C.double(valueStep), &p)
	}); err != nil {
		return nil, err
	}
	return wrapPld(p), nil
}

// Compose is the composition of d and other.
func (d *Pld) Compose(other *Pld) (*Pld, error) {
	var p *C.pydp_pld
	if err := call(func() C.pydp_status { return C.pydp_pld_compose(d.p, other.p, &p) }); err != nil {
		return nil, err
	}
	return wrapPld(p), nil
}

// SelfCompose is the k-fold composition of d with itself.
func (d *Pld) SelfCompose(k uint64) (*Pld, error) {
	var p *C.pydp_pld
	if err := call(func() C.pydp_status { return C.pydp_pld_self_compose(d.p, C.uint64_t(k), &p) }); err != nil {
		return nil, err
	}
	return wrapPld(p), nil
}

// Delta is a certified interval [lower, upper] holding delta(epsilon).
func (d *Pld) Delta(epsilon float64) (lower, upper float64, err error) {
	var lo, up C.double
	err = call(func() C.pydp_status { return C.pydp_pld_delta(d.p, C.double(epsilon), &lo, &up) })
	return float64(lo), float64(up), err
}

// Epsilon is a certified interval [lower, upper] holding epsilon(delta).
func (d *Pld) Epsilon(delta float64) (lower, upper float64, err error) {
	var lo, up C.double
	err = call(func() C.pydp_status { return C.pydp_pld_epsilon(d.p, C.double(delta), &lo, &up) })
	return float64(lo), float64(up), err
}

// Close frees the distribution (also done by the garbage collector).
func (d *Pld) Close() {
	if d.p != nil {
		C.pydp_pld_free(d.p)
		d.p = nil
	}
}
