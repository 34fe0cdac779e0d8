package pydpcore

import (
	"math"
	"testing"
)

func testKey() (k [32]byte) {
	for i := range k {
		k[i] = byte(i)
	}
	return
}

func TestBadArgumentsReturnTheLibrarysError(t *testing.T) {
	_, err := MinimalScale(Gaussian, 0, math.NaN(), 1e-6, 1.0)
	e, ok := err.(*Error)
	if !ok || e.Code != 2 || e.Message != "epsilon must be finite and >= 0, got nan" {
		t.Fatalf("got %#v", err)
	}
	if _, err := MinimalScale(Subbotin, 0.5, 1.0, 1e-6, 1.0); err == nil {
		t.Fatal("r = 0.5 accepted")
	}
	if _, err := PldFromNoise(Gaussian, 0, 1.0, 1.0, 1.5, AddRemove, 1e-3); err == nil {
		t.Fatal("sampling rate 1.5 accepted")
	}
	rng, err := NewRng(testKey(), math.MaxUint64)
	if err == nil || rng != nil {
		t.Fatal("the reserved stream 2^64 - 1 accepted")
	}
}

func TestOutputDoesNotDependOnTheThreadCount(t *testing.T) {
	var outs [2][]float64
	for i, threads := range []uint{1, 4} {
		rng, err := NewRng(testKey(), 7)
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = make([]float64, 100000)
		if err := rng.Normal(0, 1, outs[i], threads); err != nil {
			t.Fatal(err)
		}
		rng.Close()
	}
	for j := range outs[0] {
		if outs[0][j] != outs[1][j] {
			t.Fatalf("value %d differs: %v vs %v", j, outs[0][j], outs[1][j])
		}
	}
	empty, _ := NewRng(testKey(), 7)
	if err := empty.Normal(0, 1, nil, 1); err != nil {
		t.Fatalf("an empty fill failed: %v", err)
	}
}
