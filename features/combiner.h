// tensorkit/features/combiner.h: how a segment, a bag or a group of rows is reduced to one row.
//
// Glossary
//   kSum    the sum of the rows (0 for an empty segment).
//   kMean   the sum divided by the number of rows (the sum of the weights where weights apply);
//           0 for an empty segment.
//   kSqrtN  the sum divided by the square root of the number of rows (of the sum of squared
//           weights where weights apply); 0 for an empty segment.
//   kMax    the elementwise maximum; kMin the elementwise minimum. What an empty segment gives
//           is said by each operation (TensorFlow's ops differ from one another here).
#ifndef TENSORKIT_FEATURES_COMBINER_H_
#define TENSORKIT_FEATURES_COMBINER_H_

namespace tensorkit {

enum class Combiner { kSum, kMean, kSqrtN, kMax, kMin };

// "sum", "mean", "sqrtn", "max", "min".
const char* CombinerName(Combiner c);

}  // namespace tensorkit

#endif  // TENSORKIT_FEATURES_COMBINER_H_
