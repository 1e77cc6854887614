int encoder_forward(int x);
