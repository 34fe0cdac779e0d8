// Certified privacy-loss distributions (PLDs): a pessimistic and an optimistic discretisation of the
// loss L = log(dP/dQ) under P on the grid l_i = i h, composed by FFT, queried as intervals. This header
// gathers the engine; each part has its own header, its derivation and its tests:
//   pld_grid.hpp      the grid, the two sides, their construction from cell masses or atoms;
//   pld_noise.hpp     the loss of additive log-concave noise (add, remove, substitution; sampling);
//   pld_chernoff.hpp  Chernoff bounds on composed tails from the exact discrete MGFs;
//   pld_circular.hpp  FFT convolution powers with a proven rounding bound;
//   pld_compose.hpp   composition on a window, the two-level scheme for long compositions;
//   pld_query.hpp     delta(eps), epsilon(delta) and the trade-off function as certified intervals.
//
// delta(eps) = E_P[(1 - e^{eps - L})_+] + P(L = +inf). With Z = e^{-L} this is E_P[phi(e^eps Z)] with
// phi(z) = (1 - z)_+ convex and decreasing, and under composition Z is a product of independent factors.
// Hence (proofs in docs/pld.md): raising a loss (rounding up, moving mass to +inf) raises delta; lowering
// or dropping mass lowers it; a mean-preserving spread of one factor raises delta and a contraction
// lowers it (Jensen, conditioning on the other factors). The pessimistic side is built from raises and
// spreads only, the optimistic side from lowerings and contractions only; the FFT's aliasing and rounding
// are bounded and accounted on each side. Both discretisation errors are second order in h per factor.
// Checked in tests/test_pld*.py against mpmath, exact GDP and the peers, and in csrc/tests/test_pld.cpp.
#pragma once

#include "pydp/accounting/pld_chernoff.hpp"
#include "pydp/accounting/pld_circular.hpp"
#include "pydp/accounting/pld_compose.hpp"
#include "pydp/accounting/pld_grid.hpp"
#include "pydp/accounting/pld_noise.hpp"
#include "pydp/accounting/pld_query.hpp"
