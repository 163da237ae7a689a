"""One small Relax function and its printed forms before and after ToNonDataflow and
DeadCodeElimination, shared by the pass-instrument and ``tvmlite opt`` tests."""

SRC = '''
@R.function
def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
    with R.dataflow():
        lv = R.nn.relu(x)
        unused = R.exp(x)
        gv = R.add(lv, x)
        R.output(gv)
    return gv
'''

TOP = '''# from tvmlite.script import ir as I
# from tvmlite.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
'''
INPUT = TOP + '''        with R.dataflow():
            lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
            unused: R.Tensor((2, 3), dtype="float32") = R.exp(x)
            gv: R.Tensor((2, 3), dtype="float32") = R.add(lv, x)
            R.output(gv)
        return gv
'''
NON_DATAFLOW = TOP + '''        lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
        unused: R.Tensor((2, 3), dtype="float32") = R.exp(x)
        gv: R.Tensor((2, 3), dtype="float32") = R.add(lv, x)
        return gv
'''
CLEAN = TOP + '''        lv: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)
        gv: R.Tensor((2, 3), dtype="float32") = R.add(lv, x)
        return gv
'''
