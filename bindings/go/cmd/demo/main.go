// Command demo prints `name value ...` lines for tests/embedding/test_go_binding.py to compare with the
// Python API.
package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"pydpcore"
)

func floats(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, " ")
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
	var key [32]byte
	for i := range key {
		key[i] = byte(i)
	}
	fmt.Println("version", pydpcore.Version())
	fmt.Println("abi", pydpcore.ABIVersion())
	s, err := pydpcore.MinimalScale(pydpcore.Gaussian, 0, 1.0, 1e-6, 1.0)
	must(err)
	fmt.Println("scale", floats([]float64{s}))
	rng, err := pydpcore.NewRng(key, 0)
	must(err)
	defer rng.Close()
	words := make([]uint64, 4)
	must(rng.FillU64(words))
	fmt.Println("words", strings.Trim(fmt.Sprint(words), "[]"))
	x := make([]float64, 5)
	must(rng.Normal(0.0, 1.0, x, 2))
	fmt.Println("normal", floats(x))
	released, err := rng.ReleaseLaplace(65536, 1, -16, math.Inf(-1), math.Inf(1), []float64{0.0, 1.5, -2.25}, 1)
	must(err)
	fmt.Println("release_laplace", floats(released))
	one, err := pydpcore.PldFromNoise(pydpcore.Gaussian, 0, 1.0, 1.0, 0.02, pydpcore.AddRemove, 1e-3)
	must(err)
	many, err := one.SelfCompose(100)
	must(err)
	lo, up, err := many.Delta(1.0)
	must(err)
	fmt.Println("pld_delta", floats([]float64{lo, up}))
	plan, err := pydpcore.CalibrateGaussianRelease(0.5, 1e-8, 3.0, 12)
	must(err)
	fmt.Println("plan_gaussian", plan.Num, plan.Den, plan.GridExponent, plan.Shift, floats([]float64{plan.DeltaAchieved}))
	noisy, err := rng.ReleaseGaussian(plan.Num, plan.Den, plan.GridExponent, math.Inf(-1), math.Inf(1), []float64{0.0, 1.5, -2.25}, 1)
	must(err)
	fmt.Println("release_gaussian", floats(noisy))
	_, err = pydpcore.MinimalScale(pydpcore.Gaussian, 0, math.NaN(), 1e-6, 1.0)
	e := err.(*pydpcore.Error)
	fmt.Println("error", e.Code, e.Message)
}
