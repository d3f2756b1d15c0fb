from bench_shared.spec import CNN

from . import lr, softmax


def build_model(run):
    return softmax.Model(3 * 32 * 32, CNN.num_classes, lr(), lambda x: x.reshape(len(x), -1) - 0.5)


train_epoch = softmax.train_epoch
predict = softmax.predict
