"""Diagram tables, the contract with the plots: one tidy table per diagram (Kuleshov calibration curve, Levi RMSE-vs-
RMV bins, PIT histogram; Guo reliability diagram, CORP), and which rows fall in which diagram bin.
"""
