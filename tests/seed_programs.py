"""Programs from the seed tutorials that several test files run (one copy of each)."""

# Seed 000 (use_pass_infra): conv2d on `x`, the constant arithmetic `c + c` and `* 2`, and the two
# identical adds `z` and `z1`; the free name `c` is given through `extra_vars`.
SEED000 = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), "float32"), weight: R.Tensor((64, 64, 3, 3), "float32")):
        with R.dataflow():
            conv = R.nn.conv2d(x, weight)
            y = R.add(c, c)
            y1 = R.multiply(y, R.const(2, "float32"))
            y2 = R.add(conv, y1)
            z = R.add(y2, c)
            z1 = R.add(y2, c)
            z2 = R.add(z, z1)
            R.output(z2)
        return z2
'''
